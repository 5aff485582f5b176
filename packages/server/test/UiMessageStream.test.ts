/**
 * `GET /v1/turns/:turnId/ui-message-stream` on a real redis-server, read back over real
 * HTTP with the AI SDK's own client-side reader (`parseJsonEventStream` with
 * `uiMessageChunkSchema`, then `readUIMessageStream`): the UI message's text,
 * reasoning, tool and source parts are the turn's, live and after the fact, and again
 * when the reader comes back without a resume point (the turn again from its start).
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { StreamEvent } from "@sluice/core"
import { RedisStreamsLive } from "@sluice/redis"
import { bearer, publishEvents, publishHalted, request, serve, tokens } from "@sluice/testing/server"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import { inject } from "vitest"
import * as UiMessageStream from "../src/UiMessageStream.js"
import { type Read, readMessage } from "./support/uiRead.js"
import { expectedParts, partFields, uiTurn } from "./support/uiTurns.js"

const live = RedisStreamsLive.layer({ url: inject("redisUrl") })
const auth = bearer(tokens[0])
const endpoint = (base: string, turnId: string) => `${base}/v1/turns/${turnId}/ui-message-stream`

const get = (url: string) => Effect.promise(() => fetch(url, { headers: auth }))
const parts = (read: Read) => (read.message?.parts ?? []).map((part) => partFields({ ...part }))

layer(live, { timeout: 60_000, excludeTestServices: true })("the UI message stream", (it) => {
  it.effect("a finished turn reads back as one assistant message with the turn's parts; the stream ends with [DONE]", () =>
    Effect.gen(function*() {
      const base = yield* serve()
      const turnId = randomUUID()
      const events = uiTurn(turnId)
      yield* publishEvents(turnId, events)
      const response = yield* get(endpoint(base, turnId))
      expect(response.status).toBe(200)
      expect(response.headers.get("x-vercel-ai-ui-message-stream")).toBe("v1")
      expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/)
      const read = yield* readMessage(response)
      expect(read.errors).toStrictEqual([])
      expect(read.message?.role).toBe("assistant")
      expect(read.message?.id).toBe(events[0]!.run_id)
      expect(parts(read)).toStrictEqual(expectedParts)
      const text = yield* Effect.promise(() => fetch(endpoint(base, turnId), { headers: auth }).then((r) => r.text()))
      expect(text.endsWith(`data: {"type":"finish","finishReason":"stop"}\n\ndata: [DONE]\n\n`)).toBe(true)
    }))

  it.effect("a running turn is followed live; coming back (resume) replays it from the start to the same message", () =>
    Effect.gen(function*() {
      const base = yield* serve()
      const turnId = randomUUID()
      const events = uiTurn(turnId)
      const half = 12
      // one producer, publishing half the turn, then the rest when let through
      const producer = yield* publishHalted(turnId, events, half)
      const first = yield* get(endpoint(base, turnId))
      const reading = yield* Effect.forkChild(readMessage(first))
      // a reader that comes back mid-turn, as useChat's resume does
      const again = yield* get(endpoint(base, turnId))
      const rereading = yield* Effect.forkChild(readMessage(again))
      yield* producer.release
      const read = yield* Fiber.join(reading)
      const reread = yield* Fiber.join(rereading)
      expect(parts(read)).toStrictEqual(expectedParts)
      expect(parts(reread)).toStrictEqual(expectedParts)
      expect(reread.message?.id).toBe(read.message?.id)
    }))

  it.effect("a turn that ended in an error passes the error on; a cancelled turn ends with abort", () =>
    Effect.gen(function*() {
      const base = yield* serve()
      const failed = randomUUID()
      const failedEvents = uiTurn(failed, {
        type: "response_error",
        response_id: randomUUID(),
        error: { code: "producer_lost", message: "the producer stopped" }
      })
      yield* publishEvents(failed, failedEvents)
      const read = yield* readMessage(yield* get(endpoint(base, failed)))
      expect(read.errors.join("\n")).toContain("producer_lost: the producer stopped")
      expect(parts(read)).toStrictEqual(expectedParts)
      const cancelled = randomUUID()
      yield* publishEvents(
        cancelled,
        uiTurn(cancelled, {
          type: "response_done",
          response_id: randomUUID(),
          status: "cancelled",
          finish_reason: null
        })
      )
      const text = yield* Effect.promise(() =>
        fetch(endpoint(base, cancelled), { headers: auth }).then((r) => r.text())
      )
      // the last frame of the turn's last entry carries the entry's id
      expect(text).toMatch(
        /data: \{"type":"finish-step"\}\n\nid: \d+-\d+\ndata: \{"type":"abort","reason":"cancelled"\}\n\ndata: \[DONE\]\n\n$/
      )
    }))

  it.effect("bad requests: no token 401, a bad turn id 400, an unknown turn 404", () =>
    Effect.gen(function*() {
      const base = yield* serve()
      expect((yield* request(endpoint(base, randomUUID()))).status).toBe(401)
      const bad = yield* request(endpoint(base, "not-a-uuid"), auth)
      expect([bad.status, bad.body]).toStrictEqual([400, {
        error: { code: "invalid_turn_id", message: "turn id \"not-a-uuid\" is not a UUID" }
      }])
      const unknown = yield* request(endpoint(base, randomUUID()), auth)
      expect([unknown.status, (unknown.body as { error: { code: string } }).error.code]).toStrictEqual([
        404,
        "turn_not_found"
      ])
    }))
})

describe("UiMessageStream.chunks", () => {
  it.effect("closes open parts when an item fails or the turn ends mid-item", () =>
    Effect.gen(function*() {
      const turnId = randomUUID()
      const [start] = uiTurn(turnId)
      const context = { runId: start!.run_id }
      const more: ReadonlyArray<StreamEvent.Payload> = [
        { type: "item_start", item_id: "m", item_type: "message", origin: "agent", initial_content: "Hi" },
        { type: "item_start", item_id: "r", item_type: "reasoning" },
        { type: "item_error", item_id: "r", error: { code: "bad", message: "broke" } },
        { type: "item_start", item_id: "x", item_type: "compaction" },
        { type: "response_done", response_id: start!.run_id, status: "aborted", finish_reason: null }
      ]
      const events = [start!, ...more.map((payload, i) => StreamEvent.envelope(context, payload, randomUUID(), i))]
      const out = yield* Stream.runCollect(UiMessageStream.chunks(Stream.fromIterable(events)))
      expect(out).toStrictEqual([
        { type: "start", messageId: start!.run_id },
        { type: "start-step" },
        { type: "text-start", id: "m" },
        { type: "text-delta", id: "m", delta: "Hi" },
        { type: "reasoning-start", id: "r" },
        { type: "reasoning-end", id: "r" },
        { type: "error", errorText: "bad: broke" },
        { type: "text-end", id: "m" },
        { type: "finish-step" },
        { type: "abort", reason: "aborted" }
      ])
    }))
})
