/**
 * Resuming `GET /v1/turns/:turnId/ui-message-stream` after a point: every frame that
 * ends an entry's chunks names the entry (`id:`), and a reader that comes back with
 * `Last-Event-ID` (an entry id, or the event id a started turn's response names) gets
 * exactly the frames after it, so that its chunks added to the ones it had make the
 * turn's message for the AI SDK's own reader (no part opened twice, none lost). An
 * unknown event id ends in an `error` chunk, a malformed point is 400, and a running
 * turn resumed mid-way is followed to its end.
 */
import { describe, expect, it } from "@effect/vitest"
import { RedisStreamsMemory } from "@sluice/redis"
import { bearer, publishEvents, publishHalted, request, serve, tokens } from "@sluice/testing/server"
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import * as UiMessageStream from "../src/UiMessageStream.js"
import { type Read, readMessage } from "./support/uiRead.js"
import { expectedParts, partFields, uiTurn } from "./support/uiTurns.js"

const auth = bearer(tokens[0])
const endpoint = (base: string, turnId: string) => `${base}/v1/turns/${turnId}/ui-message-stream`
const text = (url: string, headers: Record<string, string> = {}) =>
  Effect.promise(() => fetch(url, { headers: { ...auth, ...headers } }).then((response) => response.text()))
const parts = (read: Read) => (read.message?.parts ?? []).map((part) => partFields({ ...part }))

interface Frame {
  readonly id: string | undefined
  readonly data: string
  readonly text: string
}

// The frames of a UI message stream body (comments left out).
const frames = (body: string): ReadonlyArray<Frame> =>
  body.split("\n\n").filter((frame) => frame !== "" && !frame.startsWith(":")).map((frame) => {
    const lines = frame.split("\n")
    const id = lines.find((line) => line.startsWith("id: "))?.slice(4)
    return { id, data: lines.find((line) => line.startsWith("data: "))!.slice(6), text: `${frame}\n\n` }
  })

// The frames after the one at `at`: none after the turn's last entry (whose frame
// the reader has, with the `[DONE]` that follows it).
const after = (all: ReadonlyArray<Frame>, at: number) => (all[at + 1]?.data === "[DONE]" ? [] : all.slice(at + 1))

// What the AI SDK's reader makes of frames.
const readFrames = (framesRead: ReadonlyArray<Frame>) =>
  readMessage(new Response(framesRead.map((frame) => frame.text).join("")))

describe("resuming the UI message stream", () => {
  it.effect(
    "after any entry id, exactly the frames after it; with the frames before, the turn's message",
    () =>
      Effect.gen(function*() {
        const base = yield* serve()
        const turnId = randomUUID()
        yield* publishEvents(turnId, uiTurn(turnId))
        const whole = frames(yield* text(endpoint(base, turnId)))
        const ids = whole.flatMap((frame, i) => (frame.id === undefined ? [] : [[frame.id, i] as const]))
        // every entry that makes chunks names itself once, on its last frame
        expect(ids.length).toBeGreaterThan(10)
        expect(new Set(ids.map(([id]) => id)).size).toBe(ids.length)
        expect(whole.at(-1)?.data).toBe("[DONE]")
        for (const [id, at] of ids) {
          const resumed = frames(yield* text(endpoint(base, turnId), { "last-event-id": id }))
          expect(resumed).toStrictEqual(after(whole, at))
          const read = yield* readFrames([...whole.slice(0, at + 1), ...resumed])
          expect(read.errors).toStrictEqual([])
          expect(parts(read)).toStrictEqual(expectedParts)
        }
        // `?after=` as well, `Last-Event-ID` winning over it
        const [middle, at] = ids[Math.floor(ids.length / 2)]!
        expect(frames(yield* text(`${endpoint(base, turnId)}?after=${middle}`))).toStrictEqual(whole.slice(at + 1))
        expect(frames(yield* text(`${endpoint(base, turnId)}?after=0-1`, { "last-event-id": middle }))).toStrictEqual(
          whole.slice(at + 1)
        )
      }).pipe(Effect.provide(RedisStreamsMemory.layer)),
    60_000
  )

  it.effect(
    "after the event id a started turn's response names, the same frames as after its entry",
    () =>
      Effect.gen(function*() {
        const base = yield* serve()
        const turnId = randomUUID()
        const events = uiTurn(turnId)
        yield* publishEvents(turnId, events)
        const response = HttpServerResponse.toWeb(UiMessageStream.response(Stream.fromIterable(events)))
        const started = frames(yield* Effect.promise(() => response.text()))
        const byEntry = frames(yield* text(endpoint(base, turnId)))
        // the same chunks; the ids name the events there, the entries here
        expect(started.map((frame) => frame.data)).toStrictEqual(byEntry.map((frame) => frame.data))
        const eventIds = new Set(events.map((event) => event.event_id))
        expect(started.flatMap((frame) => (frame.id === undefined ? [] : [frame.id])).every((id) => eventIds.has(id)))
          .toBe(true)
        for (const [i, frame] of started.entries()) {
          if (frame.id === undefined) continue
          const resumed = frames(yield* text(endpoint(base, turnId), { "last-event-id": frame.id }))
          expect(resumed).toStrictEqual(after(byEntry, i))
        }
      }).pipe(Effect.provide(RedisStreamsMemory.layer)),
    60_000
  )

  it.effect(
    "an event id the turn does not hold ends in an error chunk; a malformed point is 400",
    () =>
      Effect.gen(function*() {
        const base = yield* serve()
        const turnId = randomUUID()
        yield* publishEvents(turnId, uiTurn(turnId))
        const unknown = randomUUID()
        const resumed = frames(yield* text(endpoint(base, turnId), { "last-event-id": unknown }))
        expect(resumed.map((frame) => JSON.parse(frame.data))).toStrictEqual([
          { type: "error", errorText: `invalid_last_event_id: event ${unknown} is not in the turn` }
        ])
        const bad = yield* request(endpoint(base, turnId), { ...auth, "last-event-id": "nope" })
        expect([bad.status, (bad.body as { error: { code: string } }).error.code]).toStrictEqual([
          400,
          "invalid_last_event_id"
        ])
        // the turn id is checked first
        const badTurn = yield* request(endpoint(base, "not-a-uuid"), { ...auth, "last-event-id": "nope" })
        expect((badTurn.body as { error: { code: string } }).error.code).toBe("invalid_turn_id")
      }).pipe(Effect.provide(RedisStreamsMemory.layer)),
    60_000
  )

  it.effect(
    "a running turn resumed mid-way is followed to its end, continuing the message read so far",
    () =>
      Effect.gen(function*() {
        const base = yield* serve()
        const turnId = randomUUID()
        const events = uiTurn(turnId)
        const half = 9 // inside the text of m1: its text-start sent, its text-end not yet
        const producer = yield* publishHalted(turnId, events, half)
        // what a reader had read of the running turn: its frames up to the last id
        const first = yield* Effect.promise(() => fetch(endpoint(base, turnId), { headers: auth }))
        const reader = first.body!.getReader()
        let seen = ""
        while (!/id: 0-9\n/.test(seen)) {
          const next = yield* Effect.promise(() => reader.read())
          if (next.done) break
          seen += new TextDecoder().decode(next.value)
        }
        yield* Effect.promise(() => reader.cancel())
        const had = frames(seen.slice(0, seen.lastIndexOf("\n\n") + 2))
        expect(had.at(-1)?.id).toBe("0-9")
        expect(had.some((frame) => frame.data.includes("\"text-start\""))).toBe(true)
        const resumed = yield* Effect.promise(() =>
          fetch(endpoint(base, turnId), { headers: { ...auth, "last-event-id": "0-9" } })
        )
        yield* producer.release
        const rest = frames(yield* Effect.promise(() => resumed.text()))
        // no part opened again: the message opens once and m1's text continues
        expect(rest.some((frame) => frame.data.includes("\"type\":\"start\""))).toBe(false)
        expect(rest.some((frame) => frame.data === "{\"type\":\"text-start\",\"id\":\"m1\"}")).toBe(false)
        expect(rest.at(-1)?.data).toBe("[DONE]")
        const read = yield* readFrames([...had, ...rest])
        expect(read.errors).toStrictEqual([])
        expect(parts(read)).toStrictEqual(expectedParts)
      }).pipe(Effect.provide(RedisStreamsMemory.layer)),
    60_000
  )
})
