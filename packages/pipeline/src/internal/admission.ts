/**
 * A pipeline's admission of turns (see `TurnAdmission`): its places (`maxTurns`) and
 * its lag probe (`maxLagMs`).
 *
 * @internal
 */
import { TurnMetrics } from "@sluice/turns"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import { AtCapacity, InvalidLimit, type Limit, type LimitMet, type Load } from "../TurnAdmission.js"

/** How long the lag probe sleeps at a time. */
const probeMs = 100

/** The limits, as the pipeline's options give them. */
export interface Limits {
  readonly maxTurns?: number | undefined
  readonly maxLagMs?: number | undefined
}

/**
 * A pipeline's admission: `admit` takes a place for a turn (at `now`, the clock's
 * time) or refuses it; `release` gives one back when the turn has ended; `probe` is
 * the lag probe's fiber, to run for the pipeline's life (none without `maxLagMs`).
 */
export interface Admission {
  readonly admit: (turnId: string, now: number) => AtCapacity | undefined
  /** The turns taken, the lag and the limit a turn asked for at `now` would meet. */
  readonly load: (now: number) => Load
  readonly release: () => void
  /** From now on, every turn is refused (`shuttingDown`). */
  readonly close: () => void
  readonly probe: Effect.Effect<never> | undefined
}

const invalid = (limit: Limit, value: number | undefined): InvalidLimit | undefined =>
  value === undefined || (Number.isSafeInteger(value) && value >= 1) ? undefined : new InvalidLimit({ limit, value })

/** Checks the limits: each a positive integer, or none. */
export const check = (limits: Limits): InvalidLimit | undefined =>
  invalid("maxTurns", limits.maxTurns) ?? invalid("maxLagMs", limits.maxLagMs)

/** The admission for checked limits, its probe's first sleep starting at `startedAt`. */
export const make = (limits: Limits, startedAt: number): Admission => {
  const { maxLagMs, maxTurns } = limits
  let taken = 0
  let closed = false
  let lastWake = startedAt
  let lastLate = 0
  const probe = maxLagMs === undefined
    ? undefined
    : Effect.forever(
      Effect.andThen(
        Effect.sleep(probeMs),
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          lastLate = Math.max(0, now - lastWake - probeMs)
          lastWake = now
          return Metric.update(TurnMetrics.processLag, lastLate / 1000)
        })
      )
    )
  // how late the process runs at `now`: its last wake's lateness, or the next one's if more
  const lag = (now: number) => Math.max(lastLate, now - lastWake - probeMs)
  const full = (now: number): LimitMet | undefined => {
    if (closed) return { limit: "shuttingDown", value: taken, measured: taken }
    if (maxTurns !== undefined && taken >= maxTurns) return { limit: "maxTurns", value: maxTurns, measured: taken }
    if (maxLagMs !== undefined) {
      const late = lag(now)
      if (late > maxLagMs) return { limit: "maxLagMs", value: maxLagMs, measured: late }
    }
    return undefined
  }
  return {
    admit: (turnId, now) => {
      const met = full(now)
      if (met !== undefined) return new AtCapacity({ turnId, ...met })
      taken++
      return undefined
    },
    load: (now) => ({ turns: taken, lagMs: maxLagMs === undefined ? undefined : lag(now), full: full(now) }),
    release: () => {
      taken--
    },
    close: () => {
      closed = true
    },
    probe
  }
}
