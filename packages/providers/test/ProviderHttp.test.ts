/**
 * `ProviderHttp.layer`, the HTTP client `sluice run` and `sluice serve` call providers with (Node's `http`
 * module, connections kept alive) against a loopback provider: a body streams whole
 * over a kept connection, and a body that goes quiet after output ends the turn with
 * `stream_idle_timeout`, keeping what arrived, its request aborted (the provider sees
 * its connection close rather than wait in the agent's pool).
 */
import { describe, expect, it } from "@effect/vitest"
import { Summary, Turn } from "@sluice/accumulator"
import type { StreamEvent } from "@sluice/core"
import { pause, recorded, serve } from "@sluice/testing/providers"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { LlmRequest, ProviderClient, ProviderHttp } from "../src/index.js"

const request = LlmRequest.prompt("m1", "Hello")
const body = recorded("openai-chat/text-simple.sse")

const summaryOf = (events: ReadonlyArray<StreamEvent.StreamEvent>) =>
  Summary.fromTurn(Result.getOrThrow(Turn.fromEvents(events)))

const client = (baseUrl: string) =>
  ProviderClient.make({ provider: "openai-chat", apiKeys: [Redacted.make("k1")], baseUrl, idleTimeout: "60 seconds" })
    .pipe(Effect.provide(ProviderHttp.layer))

describe("the providers' HTTP client of sluice run", () => {
  it.effect("two turns stream whole, one after the other", () =>
    Effect.gen(function*() {
      const server = yield* serve([{ _tag: "sse", body }, { _tag: "sse", body }])
      const live = yield* client(server.url)
      for (let turn = 0; turn < 2; turn++) {
        const events = yield* Stream.runCollect(live.stream(request))
        const summary = summaryOf(events)
        expect(summary.status).toBe("complete")
        expect(summary.text.length).toBeGreaterThan(0)
      }
      expect(server.requests()).toHaveLength(2)
    }).pipe(Effect.scoped), 30_000)

  it.effect(
    "a body quiet past the idle timeout after output: the turn ends stream_idle_timeout and the connection closes",
    () =>
      Effect.gen(function*() {
        const server = yield* serve([{ _tag: "hang", body, events: 3 }])
        const live = yield* client(server.url)
        const seen: Array<StreamEvent.StreamEvent> = []
        const fiber = yield* Effect.forkChild(
          Stream.runForEach(live.stream(request), (event) => Effect.sync(() => seen.push(event)))
        )
        yield* server.hungWritten
        // real I/O goes on until the output arrived; the test's clock then passes the timeout
        for (let polls = 0; !seen.some((event) => event.type === "item_delta"); polls++) {
          if (polls > 10_000) return yield* Effect.die(new Error("no output arrived"))
          yield* Effect.promise(pause)
        }
        yield* TestClock.adjust("60 seconds")
        yield* Fiber.join(fiber)
        const summary = summaryOf(seen)
        expect(summary.status).toBe("error")
        expect(summary.text.length).toBeGreaterThan(0)
        expect(summary.errors.map((error) => error.code)).toStrictEqual(["stream_idle_timeout"])
        yield* server.hungClosed
        expect(server.requests()).toHaveLength(1)
      }).pipe(Effect.scoped),
    30_000
  )
})
