/**
 * Threads (`pnpm bench threads`): a thread of 100 turns, each ended with the final
 * items of a recorded Anthropic turn with thinking and a tool call
 * (`anthropic/thinking-tools.sse` of `@sluice/testing`'s transcripts), on the embedded
 * in-memory store:
 *
 * 1. the history assembly: `Threads.history` of the 100-turn thread (its log read and
 *    folded, every turn's messages made), in total and per turn, and `beginTurn` of the
 *    101st (what `POST /v1/threads/:threadId/turns` does before the provider is asked);
 * 2. `GET /v1/threads/:threadId` of the thread on the in-process server over loopback
 *    HTTP: time and bytes of the answer.
 *
 * Wall-clock time is fine here: this is a script, never a test.
 */
import { Turn } from "@sluice/accumulator"
import { TurnContext, TurnPipeline, TurnSource } from "@sluice/pipeline"
import { RedisStreamsMemory } from "@sluice/redis"
import * as ThreadStarter from "@sluice/server/ThreadStarter"
import * as TurnServer from "@sluice/server/TurnServer"
import { transcriptPath } from "@sluice/testing/fixtures"
import { Threads } from "@sluice/turns"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { readFileSync } from "node:fs"
import { performance } from "node:perf_hooks"
import { measure } from "./harness.js"

const PREFIX = "bench-threads"
const TOKEN = "bench-threads-token-0123456789"
const TURNS = 100

const transcript = new Uint8Array(readFileSync(transcriptPath("anthropic", "thinking-tools.sse")))

const us = (seconds: number) => `${(seconds * 1e6).toFixed(0)} µs`
const ms = (seconds: number) => `${(seconds * 1e3).toFixed(2)} ms`

// A starter that is never asked (the bench starts no turn over HTTP).
const idle = ThreadStarter.ThreadStarter.of({
  check: Effect.succeed,
  start: () => Effect.die(new Error("the bench starts no turn over HTTP"))
})

export const run = async (): Promise<string> => {
  const program = Effect.gen(function*() {
    const pipeline = yield* TurnPipeline.TurnPipeline
    const folded = yield* pipeline.run(
      yield* TurnContext.make(),
      TurnSource.sse("anthropic", Stream.make(transcript))
    )
    const items = Turn.finalItems(folded.turn)
    const threads = yield* Threads.Threads
    const { threadId } = yield* threads.create("bench-thread")
    for (let i = 0; i < TURNS; i++) {
      const begun = yield* threads.beginTurn(threadId, {
        message: { role: "user", content: `Question ${i}: what is the weather in Lisbon and in Oslo?` }
      })
      yield* threads.endTurn(threadId, begun.turnId, { status: "completed", provider: "anthropic", items })
    }
    const history = yield* Effect.promise(() =>
      measure(
        "history",
        0,
        () => Effect.runPromise(Effect.map(threads.history(threadId), (messages) => messages.length))
      )
    )
    const messages = (yield* threads.history(threadId)).length
    // beginTurn past the 100th turn (each reads the whole log), ended at once, ten times
    const begins: Array<number> = []
    for (let i = 0; i < 10; i++) {
      const start = performance.now()
      const begun = yield* threads.beginTurn(threadId, { message: { role: "user", content: "one more" } })
      begins.push((performance.now() - start) / 1000)
      yield* threads.endTurn(threadId, begun.turnId, { status: "completed", items: [] })
    }
    begins.sort((a, b) => a - b)
    const server = yield* Layer.build(
      TurnServer.layer({ port: 0, host: "127.0.0.1", prefix: PREFIX, tokens: [TOKEN] })
    ).pipe(Effect.provideService(ThreadStarter.ThreadStarter, idle))
    const address = yield* Effect.provide(TurnServer.address, server)
    const port = address._tag === "UnixPathAddress" ? 0 : address.port
    let bytes = 0
    const got = yield* Effect.promise(() =>
      measure("get", 0, async () => {
        const response = await fetch(`http://127.0.0.1:${port}/v1/threads/bench-thread`, {
          headers: { authorization: `Bearer ${TOKEN}` }
        })
        bytes = (await response.arrayBuffer()).byteLength
        return 1
      })
    )
    return [
      "## Threads (`pnpm bench threads`)",
      "",
      `A thread of ${TURNS} turns, each ended with the ${items.length} final items of a recorded Anthropic turn ` +
      "(thinking with a signature, text, a tool call), on the embedded store.",
      "",
      "| measure | value |",
      "|---|---|",
      `| \`history\` of the thread (${messages} messages) | ${ms(history.seconds)} |`,
      `| history assembly per turn | ${us(history.seconds / TURNS)} |`,
      `| \`beginTurn\` at ${TURNS}+ turns (median of 10) | ${ms(begins[5]!)} |`,
      `| \`GET /v1/threads/:id\` (median of 9) | ${ms(got.seconds)} |`,
      `| its body | ${(bytes / 1024).toFixed(1)} KiB |`,
      ""
    ].join("\n")
  })
  const layers = Layer.mergeAll(
    TurnPipeline.layer({ publisher: { prefix: PREFIX }, lease: false }),
    Threads.layer({ prefix: PREFIX })
  ).pipe(Layer.provideMerge(RedisStreamsMemory.layer))
  return Effect.runPromise(program.pipe(Effect.scoped, Effect.provide(layers)))
}
