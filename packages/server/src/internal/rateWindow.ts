/**
 * A sliding window of requests per key on Effect's `Clock`: at most `max` in any
 * `windowMs`; one more is refused with how long until the oldest leaves the window.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"

/**
 * The outcome of `take`: taken, or refused with the whole seconds to wait (at least 1).
 *
 * @internal
 */
export type Taken = { readonly _tag: "Taken" } | { readonly _tag: "Refused"; readonly retryAfterSeconds: number }

/**
 * A window of `max` requests per `windowMs` for each key. Keys with nothing in their
 * window are forgotten as they are next seen, and all of them once `sweepEvery` keys
 * were taken, so the map holds only keys active within the window.
 *
 * @internal
 */
export const make = (max: number, windowMs: number) =>
  Effect.sync(() => {
    const taken = new Map<string, Array<number>>()
    let sinceSweep = 0
    const sweep = (now: number) => {
      for (const [key, times] of taken) {
        if (times[times.length - 1]! <= now - windowMs) taken.delete(key)
      }
    }
    return {
      take: (key: string): Effect.Effect<Taken> =>
        Effect.map(Clock.currentTimeMillis, (now): Taken => {
          if (++sinceSweep >= 1024) {
            sinceSweep = 0
            sweep(now)
          }
          const times = (taken.get(key) ?? []).filter((at) => at > now - windowMs)
          if (times.length >= max) {
            taken.set(key, times)
            return { _tag: "Refused", retryAfterSeconds: Math.max(1, Math.ceil((times[0]! + windowMs - now) / 1000)) }
          }
          times.push(now)
          taken.set(key, times)
          return { _tag: "Taken" }
        })
    }
  })
