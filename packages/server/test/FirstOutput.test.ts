/**
 * The list's `firstOutputMs` (docs/http.md): the time from a turn's start to the first
 * event of the model's output, read from Stream A. Stream B keeps only each item's
 * latest upsert, whose time is the item's last change: read from there, a turn whose
 * only message streamed for ten seconds showed its first output at its end.
 */
import { describe, expect, it } from "@effect/vitest"
import { StreamBMessage, StreamEvent, type UIUpsert } from "@sluice/core"
import { RedisStreams, RedisStreamsMemory } from "@sluice/redis"
import { TurnEntry, TurnKeys } from "@sluice/turns"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { randomUUID } from "node:crypto"
import { summarize } from "../src/internal/turnSummary.js"

const prefix = "first-output"
const t0 = 1_700_000_000_000
const threadId = randomUUID()
const runId = randomUUID()

const upsert = (turnId: string, itemId: string, changeType: UIUpsert.UIUpsertChangeType, content: string) => ({
  type: "item_upsert" as const,
  turnId,
  threadId,
  itemId,
  itemType: "message" as const,
  changeType,
  content,
  origin: "agent" as const
})

// Stream B as the publisher leaves it: turn_started, each item's latest upsert, the end.
const publishB = (turnId: string, payloads: ReadonlyArray<readonly [number, StreamBMessage.UIPayload]>) =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams.RedisStreams
    for (const [i, [at, payload]] of payloads.entries()) {
      const message = StreamBMessage.wrap(payload, randomUUID(), t0 + at)
      yield* redis.xadd(TurnKeys.upsertsKey(prefix, turnId), {
        id: `0-${i + 1}`,
        fields: TurnEntry.fromStreamBMessage(message)
      })
    }
  })

const publishA = (turnId: string, payloads: ReadonlyArray<readonly [number, StreamEvent.Payload]>) =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams.RedisStreams
    for (const [i, [at, payload]] of payloads.entries()) {
      const event = StreamEvent.envelope({ runId }, payload, randomUUID(), t0 + at)
      const fields = Result.getOrThrow(TurnEntry.fromStreamEvent(turnId, event))
      yield* redis.xadd(TurnKeys.eventsKey(prefix, turnId), { id: `0-${i + 1}`, fields })
    }
  })

describe("the list's firstOutputMs", () => {
  it.effect(
    "is the first output event's time on Stream A, not the last upsert's on Stream B",
    () =>
      Effect.gen(function*() {
        const turnId = randomUUID()
        const responseId = randomUUID()
        yield* publishA(turnId, [
          [0, {
            type: "response_start",
            response_id: responseId,
            turn_id: turnId,
            thread_id: threadId,
            model_id: "m",
            provider_id: "p",
            created_at: t0
          }],
          // the user's message is input, not output
          [1, { type: "item_start", item_id: "u", item_type: "message", origin: "user", initial_content: "hi" }],
          [2, {
            type: "item_done",
            item_id: "u",
            final_item: { type: "message", id: "u", content: "hi", origin: "user" }
          }],
          [50, { type: "item_start", item_id: "a", item_type: "message" }],
          [51, { type: "item_delta", item_id: "a", delta_content: "Hel" }],
          [9_990, {
            type: "item_done",
            item_id: "a",
            final_item: { type: "message", id: "a", content: "Hello", origin: "agent" }
          }],
          [9_993, { type: "response_done", response_id: responseId, status: "complete", finish_reason: "stop" }]
        ])
        yield* publishB(turnId, [
          [0, { type: "turn_started", turnId, threadId, providerId: "p" }],
          [9_990, upsert(turnId, "a", "completed", "Hello")],
          [9_993, { type: "turn_completed", turnId, threadId, status: "complete" }]
        ])
        const summary = yield* summarize(prefix, turnId, t0)
        expect(summary).toMatchObject({ status: "complete", firstOutputMs: 50, durationMs: 9_993 })
      }).pipe(Effect.provide(RedisStreamsMemory.layer)),
    30_000
  )

  it.effect(
    "without Stream A, only an upsert still `created` tells it; a changed item says nothing",
    () =>
      Effect.gen(function*() {
        const created = randomUUID()
        yield* publishB(created, [
          [0, { type: "turn_started", turnId: created, threadId, providerId: "p" }],
          [40, upsert(created, "a", "created", "H")]
        ])
        expect(yield* summarize(prefix, created, t0)).toMatchObject({ status: "streaming", firstOutputMs: 40 })
        const changed = randomUUID()
        yield* publishB(changed, [
          [0, { type: "turn_started", turnId: changed, threadId, providerId: "p" }],
          [9_990, upsert(changed, "a", "completed", "Hello")],
          [9_993, { type: "turn_completed", turnId: changed, threadId, status: "complete" }]
        ])
        const summary = yield* summarize(prefix, changed, t0)
        expect(summary).toMatchObject({ status: "complete", durationMs: 9_993 })
        expect(summary.firstOutputMs).toBeUndefined()
      }).pipe(Effect.provide(RedisStreamsMemory.layer)),
    30_000
  )
})
