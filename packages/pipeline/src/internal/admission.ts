/**
 * A pipeline's places for turns (`maxTurns`), taken and given back in its fiber.
 *
 * @internal
 */
import { AtCapacity, InvalidMaxTurns } from "../TurnAdmission.js"

/**
 * The places of a pipeline: `admit` takes one for a turn or refuses it, `release`
 * gives one back when the turn has ended.
 */
export interface Places {
  readonly admit: (turnId: string) => AtCapacity | undefined
  readonly release: () => void
}

/**
 * The places for a limit (none: every turn is admitted).
 */
export const places = (maxTurns: number | undefined): Places => {
  if (maxTurns === undefined) return { admit: () => undefined, release: () => {} }
  let taken = 0
  return {
    admit: (turnId) => {
      if (taken >= maxTurns) return new AtCapacity({ turnId, maxTurns })
      taken++
      return undefined
    },
    release: () => {
      taken--
    }
  }
}

/**
 * Checks a limit: a positive integer, or none.
 */
export const checkMaxTurns = (maxTurns: number | undefined): InvalidMaxTurns | undefined =>
  maxTurns === undefined || (Number.isSafeInteger(maxTurns) && maxTurns >= 1)
    ? undefined
    : new InvalidMaxTurns({ maxTurns })
