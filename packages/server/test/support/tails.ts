/**
 * A `RedisStreams` that wraps the one in context and watches its tails: where each
 * tail started, how many are open, when they are released; and that can make a tail
 * fail after a number of entries, as a dropped connection would.
 */
import { RedisError, RedisStreams } from "@sluice/redis"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"

/** What the n-th tail does: pass everything, or fail after `after` entries. */
export type TailPlan = { readonly fail: false } | {
  readonly fail: true
  readonly after: number
  readonly reason: RedisError.RedisErrorReason
}

export const pass: TailPlan = { fail: false }

export interface TailLog {
  /** The `after` of each tail opened, in order. */
  readonly starts: Array<string>
  open: number
  released: number
}

export const watchedTails = (plan: (call: number) => TailPlan = () => pass) => {
  const log: TailLog = { starts: [], open: 0, released: 0 }
  const waiters: Array<readonly [number, Deferred.Deferred<void>]> = []
  const notify = () => {
    for (const [n, waiter] of waiters) if (log.released >= n) Deferred.doneUnsafe(waiter, Effect.void)
  }
  /** Completes once `n` tails have been released. */
  const released = (n: number) =>
    Effect.suspend(() => {
      if (log.released >= n) return Effect.void
      const waiter = Deferred.makeUnsafe<void>()
      waiters.push([n, waiter])
      return Deferred.await(waiter)
    })
  const layer = Layer.effect(
    RedisStreams.RedisStreams,
    RedisStreams.RedisStreams.useSync((inner) => ({
      ...inner,
      tail: (key: string, options?: RedisStreams.TailOptions) =>
        Stream.unwrap(Effect.map(
          Effect.acquireRelease(
            Effect.sync(() => {
              const step = plan(log.starts.length)
              log.starts.push(options?.after ?? "0-0")
              log.open++
              return step
            }),
            () =>
              Effect.sync(() => {
                log.open--
                log.released++
                notify()
              })
          ),
          (step) => {
            const entries = inner.tail(key, options)
            if (!step.fail) return entries
            const error = new RedisError.RedisError({
              reason: step.reason,
              command: "XREAD",
              key,
              detail: "injected failure"
            })
            return Stream.concat(Stream.take(entries, step.after), Stream.fail(error))
          }
        ))
    }))
  )
  return { layer, log, released }
}
