/**
 * One call from a request to a streamed, persisted turn, as an application's handler
 * writes it: `TurnPipeline.start` and `UiMessageStream.response` of its events. The
 * AI SDK's own reader (as `useChat` reads) folds the response into the turn's
 * assistant message, while both streams of the turn are in Redis, whole. And
 * `TurnFeed.response` of its upserts: the frames `/v1/turns/:turnId/upserts` sends.
 */
import { describe, expect, it } from "@effect/vitest"
import { Sse } from "@sluice/core"
import { TurnContext, TurnPipeline, TurnSource } from "@sluice/pipeline"
import { RedisStreams, RedisStreamsMemory, StreamEntry } from "@sluice/redis"
import { transcriptPath } from "@sluice/testing/fixtures"
import { TurnEntry, TurnKeys } from "@sluice/turns"
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { readFileSync } from "node:fs"
import * as TurnFeed from "../src/TurnFeed.js"
import * as UiMessageStream from "../src/UiMessageStream.js"
import { readMessage } from "./support/uiRead.js"

const prefix = "ui-response-test"
const transcript = new Uint8Array(readFileSync(transcriptPath("anthropic-text.sse")))
const pipeline = TurnPipeline.layer({ publisher: { prefix } }).pipe(Layer.provideMerge(RedisStreamsMemory.layer))

describe("UiMessageStream.response of a started turn", () => {
  it.effect("streams the turn as the AI SDK reads it while the pipeline persists it", () =>
    Effect.gen(function*() {
      const context = yield* TurnContext.make()
      const running = yield* TurnPipeline.start(context, TurnSource.sse("anthropic", Stream.make(transcript)))
      const response = HttpServerResponse.toWeb(UiMessageStream.response(running.events))
      expect(response.headers.get("content-type")).toContain("text/event-stream")
      expect(response.headers.get("x-vercel-ai-ui-message-stream")).toBe("v1")
      const read = yield* readMessage(response)
      const result = yield* running.result
      expect(read.errors).toStrictEqual([])
      const text = (read.message?.parts ?? []).flatMap((part) => (part.type === "text" ? [part.text] : [])).join("")
      const folded = result.turn.items.flatMap((item) => (item.type === "message" ? [item.content] : [])).join("")
      expect(text.length).toBeGreaterThan(0)
      expect(text).toBe(folded)
      const redis = yield* RedisStreams.RedisStreams
      const a = yield* redis.xrange(TurnKeys.eventsKey(prefix, context.turnId), "-", "+")
      const b = yield* redis.xrange(TurnKeys.upsertsKey(prefix, context.turnId), "-", "+")
      expect(a.filter(TurnEntry.isFinal).length).toBe(1)
      expect(b.filter(TurnEntry.isFinal).length).toBe(1)
    }).pipe(Effect.provide(pipeline)))

  // live: the web Response's body is read by the platform's own promises, outside this
  // test's fiber and its TestClock; nothing here waits on time (the turn ends by itself)
  it.live("TurnFeed.response of the turn's upserts sends Stream B as /upserts does, to its last entry", () =>
    Effect.gen(function*() {
      const context = yield* TurnContext.make()
      const running = yield* TurnPipeline.start(context, TurnSource.sse("anthropic", Stream.make(transcript)))
      const response = HttpServerResponse.toWeb(TurnFeed.response(running.upserts))
      expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8")
      expect(response.headers.get("cache-control")).toBe("no-cache, no-transform")
      const bytes = new Uint8Array(yield* Effect.promise(() => response.arrayBuffer()))
      const frames = yield* Stream.make(bytes).pipe(Sse.decode(), Stream.runCollect)
      yield* running.result
      const redis = yield* RedisStreams.RedisStreams
      const held = yield* redis.xrange(TurnKeys.upsertsKey(prefix, context.turnId), "-", "+")
      const field = (entry: StreamEntry.StreamEntry, name: string) =>
        StreamEntry.field(entry, name).pipe((value) => (value._tag === "Some" ? value.value : undefined))
      const sent = frames.map((frame) => ({ id: frame.id, event: frame.event, data: frame.data }))
      // every entry Redis keeps was sent as its frame (superseded upserts it deleted were sent too)
      for (const entry of held) {
        expect(sent).toContainEqual({ id: entry.id, event: field(entry, "payloadType"), data: field(entry, "payload") })
      }
      expect(sent.at(-1)?.id).toBe(held.at(-1)?.id)
      expect(TurnEntry.isFinal(held.at(-1)!)).toBe(true)
    }).pipe(Effect.provide(pipeline)))
})
