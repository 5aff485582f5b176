/**
 * The batch gradient (docs/upserts.md): how many more tokens an item must gain before its next
 * `updated` upsert. Steps add up to cumulative thresholds (`[10, 10, 20, 20, 50, ...]`
 * gives 10, 20, 40, 60, 110, ...). Past the listed steps the last step repeats, and,
 * with a `growth` above 0, each further step is also at least `growth` times what the
 * item had when it was last upserted: a long item keeps getting upserts, and what all
 * its upserts carry together stays within about `1 + 1/growth` times its size (each
 * upsert carries the whole content), whatever the number of its deltas.
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
  /**
   * Past the listed steps, the least growth of an item between two upserts, as a share
   * of what was last upserted (0: the last step alone).
   */
  readonly growth: number
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
 * The default growth past the listed steps: a quarter of what was last upserted, so an
 * item's upserts carry together at most about five times its size.
 *
 * @since 0.3.0
 * @category constants
 */
export const defaultGrowth = 0.25

/**
 * Builds a gradient from steps that are already known to be positive integers and a
 * growth that is a finite number at or above 0 (the options schema checks them).
 * Without a growth, the last step alone repeats past the listed steps.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (steps: Arr.NonEmptyReadonlyArray<number>, growth = 0): Gradient => {
  const thresholds: Arr.NonEmptyArray<number> = [steps[0]]
  for (let i = 1; i < steps.length; i++) thresholds.push(thresholds[i - 1]! + steps[i]!)
  return { steps, thresholds, growth }
}

/**
 * The gradient of docs/upserts.md's default steps, with the default growth.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultGradient: Gradient = make(defaultSteps, defaultGrowth)

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
 * The tokens an item must reach for its next `updated` upsert, at batch index `index`
 * with `emitted` tokens in its last upsert: the threshold at the index, and past the
 * listed steps at least `emitted * (1 + growth)`.
 *
 * @since 0.3.0
 * @category accessors
 */
export const nextThreshold = (self: Gradient, index: number, emitted: number): number => {
  const threshold = thresholdAt(self, index)
  return index < self.thresholds.length || self.growth <= 0
    ? threshold
    : Math.max(threshold, Math.ceil(emitted * (1 + self.growth)))
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
