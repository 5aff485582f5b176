/**
 * A producer process for the end-to-end tests: runs one turn through `@sluice/pipeline`'s
 * `TurnPipeline` against a real Redis, one text delta every `everyMs`, without end,
 * holding the turn's lease like any producer. It writes `running` on stdout once the
 * first Stream B message is in Redis. The test kills it (SIGKILL: no ending written)
 * or cancels the turn.
 *
 *   tsx slowProducer.ts <redisUrl> <prefix> <turnId> [everyMs]
 */
import { StreamEvent } from "@sluice/core"
import { TurnContext, TurnPipeline, TurnSource } from "@sluice/pipeline"
import { RedisStreamsLive } from "@sluice/redis"
import { openingPayloads } from "@sluice/testing/server"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"

const [url, prefix, turnId, every] = process.argv.slice(2)
if (url === undefined || prefix === undefined || turnId === undefined) {
  process.stderr.write("usage: slowProducer.ts <redisUrl> <prefix> <turnId> [everyMs]\n")
  process.exit(2)
}
const everyMs = Number(every ?? "100")

const source = TurnSource.events((context) => {
  const eventContext = { runId: context.runId }
  const deltas = Stream.iterate(1, (n) => n + 1).pipe(
    Stream.schedule(Schedule.spaced(`${everyMs} millis`)),
    Stream.map((n): StreamEvent.Payload => ({ type: "item_delta", item_id: "msg-1", delta_content: `word ${n} ` }))
  )
  return Stream.concat(Stream.fromIterable(openingPayloads(context)), deltas).pipe(
    Stream.mapEffect((payload) => StreamEvent.make(eventContext, payload))
  )
})

let announced = false
const program = Effect.gen(function*() {
  const context = yield* TurnContext.make({ turnId, prefix })
  const result = yield* TurnPipeline.run(context, source, {
    onMessage: () =>
      Effect.sync(() => {
        if (!announced) process.stdout.write("running\n")
        announced = true
      })
  })
  process.stdout.write(`ended ${result.turn.status}\n`)
})

Effect.runPromise(
  program.pipe(
    Effect.provide(
      TurnPipeline.layer({ publisher: { prefix } }).pipe(Layer.provide(RedisStreamsLive.layer({ url })))
    )
  )
).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`producer failed: ${String(error)}\n`)
    process.exit(1)
  }
)
