/**
 * A `RedisStreams` that wraps the one in context and injects faults into `xaddAll`,
 * the publisher's only write: a batch dropped before it reached Redis, a batch whose
 * reply was lost after it landed, a batch of which only a prefix landed. It also
 * records the size of every batch and can hold every write until a gate opens.
 */
import { RedisError } from "@sluice/redis/RedisError"
import { RedisStreams } from "@sluice/redis/RedisStreams"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"

/**
 * What a write does: go through, never arrive, land with its reply lost, land in part.
 *
 * @since 0.3.0
 */
export type Fault = "pass" | "drop" | "lose-reply" | "half-lands"

/**
 * What the faulty layer saw: the size of every batch and the fault it met.
 *
 * @since 0.3.0
 */
export interface FaultLog {
  readonly batchSizes: Array<number>
  readonly faults: Array<Fault>
}

/**
 * The `RedisStreams` in context with faults injected into `xaddAll`.
 *
 * @since 0.3.0
 */
export const faulty = (
  plan: (call: number) => Fault,
  options: { readonly gate?: Deferred.Deferred<void> } = {}
): {
  readonly layer: Layer.Layer<RedisStreams, never, RedisStreams>
  readonly log: FaultLog
  /** Completes once `xaddAll` has been called `n` times. */
  readonly reached: (n: number) => Effect.Effect<void>
} => {
  const log: FaultLog = { batchSizes: [], faults: [] }
  const waiters: Array<readonly [number, Deferred.Deferred<void>]> = []
  const reached = (n: number) =>
    Effect.suspend(() => {
      if (log.faults.length >= n) return Effect.void
      const waiter = Deferred.makeUnsafe<void>()
      waiters.push([n, waiter])
      return Deferred.await(waiter)
    })
  const notify = () => {
    for (const [n, waiter] of waiters) if (log.faults.length >= n) Deferred.doneUnsafe(waiter, Effect.void)
  }
  const layer = Layer.effect(
    RedisStreams,
    Effect.map(RedisStreams, (inner) => ({
      ...inner,
      xaddAll: (key, entries, xaddOptions) =>
        Effect.suspend(() => {
          const fault = plan(log.faults.length)
          log.faults.push(fault)
          log.batchSizes.push(entries.length)
          notify()
          const lost = new RedisError({ reason: "Unavailable", command: "XADD", key, detail: `injected ${fault}` })
          const write = (() => {
            switch (fault) {
              case "pass":
                return inner.xaddAll(key, entries, xaddOptions)
              case "drop":
                return Effect.fail(lost)
              case "lose-reply":
                return Effect.andThen(inner.xaddAll(key, entries, xaddOptions), Effect.fail(lost))
              case "half-lands": {
                const half = Math.ceil(entries.length / 2)
                return Effect.map(inner.xaddAll(key, entries.slice(0, half), xaddOptions), (landed) => [
                  ...landed,
                  ...entries.slice(half).map(() => Result.fail(lost))
                ])
              }
            }
          })()
          return options.gate === undefined ? write : Effect.andThen(Deferred.await(options.gate), write)
        })
    }))
  )
  return { layer, log, reached }
}
