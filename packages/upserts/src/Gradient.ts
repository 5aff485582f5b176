/**
 * The batch gradient (docs/upserts.md): how many more tokens an item must gain before its next
 * `updated` upsert. Steps add up to cumulative thresholds (`[10, 10, 20, 20, 50, ...]`
 * gives 10, 20, 40, 60, 110, ...), and the last step repeats forever, so a long item
 * keeps getting upserts at a steady pace after the listed steps run out.
 *
 * @since 0.1.0
 */
import type * as Arr from "effect/Array"
import * as Schedule from "effect/Schedule"

/**
 * A validated gradient: positive integer steps, at least one, with their cumulative
 * thresholds.
 *
 * @since 0.1.0
 * @category models
 */
export interface Gradient {
  readonly steps: Arr.NonEmptyReadonlyArray<number>
  /** `thresholds[i]` is the sum of `steps[0..i]`. */
  readonly thresholds: Arr.NonEmptyReadonlyArray<number>
}

/**
 * The docs/upserts.md default gradient.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultSteps: Arr.NonEmptyReadonlyArray<number> = [
  10,
  10,
  20,
  20,
  50,
  50,
  50,
  50,
  100,
  100,
  200,
  200,
  500,
  500,
  1000,
  1000,
  2000
]

/**
 * Builds a gradient from steps that are already known to be positive integers (the
 * options schema checks them).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (steps: Arr.NonEmptyReadonlyArray<number>): Gradient => {
  const thresholds: Arr.NonEmptyArray<number> = [steps[0]]
  for (let i = 1; i < steps.length; i++) thresholds.push(thresholds[i - 1]! + steps[i]!)
  return { steps, thresholds }
}

/**
 * The gradient of docs/upserts.md's default steps.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultGradient: Gradient = make(defaultSteps)

/**
 * The cumulative threshold at a batch index: past the listed steps, each further
 * index adds the last step again.
 *
 * @since 0.1.0
 * @category accessors
 */
export const thresholdAt = (self: Gradient, index: number): number => {
  const listed = self.thresholds.length
  if (index < listed) return self.thresholds[index]!
  const last = self.steps[self.steps.length - 1]!
  return self.thresholds[listed - 1]! + (index - listed + 1) * last
}

/**
 * The first batch index whose threshold is above `tokens`, starting from `index`:
 * where an item stands once every threshold it has reached is consumed.
 *
 * @since 0.1.0
 * @category accessors
 */
export const indexAfter = (self: Gradient, index: number, tokens: number): number => {
  let next = index
  const listed = self.thresholds.length
  while (next < listed && self.thresholds[next]! <= tokens) next++
  if (next < listed) return next
  // Past the listed steps the thresholds are evenly spaced by the last step.
  const last = self.steps[self.steps.length - 1]!
  const base = self.thresholds[listed - 1]!
  const crossed = tokens < base ? 0 : Math.floor((tokens - base) / last) + 1
  return Math.max(next, listed - 1 + crossed)
}

/**
 * How many thresholds lie at or below `tokens`.
 *
 * @since 0.1.0
 * @category accessors
 */
export const crossedBy = (self: Gradient, tokens: number): number => indexAfter(self, 0, tokens)

/**
 * The gradient as a `Schedule` whose successive outputs are the cumulative thresholds
 * (10, 20, 40, 60, 110, ... for the default steps), never ending. Each recurrence is
 * one batch level; the outputs are exactly `thresholdAt(gradient, n)` for the n-th
 * recurrence, the same function the stage consults on every delta.
 *
 * @since 0.1.0
 * @category schedules
 */
export const schedule = (self: Gradient): Schedule.Schedule<number> =>
  Schedule.map(Schedule.forever, ({ output: recurrence }) => thresholdAt(self, recurrence))
