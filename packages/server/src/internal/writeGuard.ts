/**
 * Readers whose client stops taking bytes are dropped (docs/http.md#slow-readers). A
 * response body is written with backpressure: the server pulls its next write only once
 * the client has taken the one before (Node's buffer drained). A body whose last write
 * has waited `timeoutMs` on Effect's `Clock` without being taken is given up: the
 * request's fiber is interrupted, which closes the connection, and everything the
 * reader held is let go. The client resumes with the last id it got.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Stream from "effect/Stream"

const dropped = Metric.counter("sluice_sse_readers_dropped_total", {
  description: "SSE readers closed because their client took no byte of a write for writeTimeoutMs"
})

/**
 * The body, given up when a write of it has not been taken for `timeoutMs`: the fiber
 * that pulls it (the request's) is interrupted, so the response is cut and the
 * connection closed. Time spent waiting for the body's next element is not counted.
 *
 * @internal
 */
export const dropStalled = (timeoutMs: number) => <A, E, R>(self: Stream.Stream<A, E, R>): Stream.Stream<A, E, R> =>
  Stream.transformPull(self, (pull, scope) =>
    Effect.gen(function*() {
      const clock = yield* Clock.Clock
      // the fiber that writes the body, and since when its last write waits
      let writer: { readonly interruptUnsafe: () => void } | undefined
      let waitingSince: number | undefined
      const watch = Effect.gen(function*() {
        for (;;) {
          const since = waitingSince
          const now = clock.currentTimeMillisUnsafe()
          const left = since === undefined ? timeoutMs : since + timeoutMs - now
          if (left > 0) {
            yield* Effect.sleep(Duration.millis(left))
            continue
          }
          yield* Metric.update(dropped, 1)
          yield* Effect.logInfo(`closing a stream whose client took no byte for ${timeoutMs} ms`)
          writer?.interruptUnsafe()
          return
        }
      })
      yield* Effect.forkIn(watch, scope)
      return Effect.withFiber((fiber) => {
        writer = fiber
        waitingSince = undefined
        return Effect.map(pull, (chunk) => {
          waitingSince = clock.currentTimeMillisUnsafe()
          return chunk
        })
      })
    }))
