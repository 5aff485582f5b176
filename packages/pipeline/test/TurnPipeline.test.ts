/**
 * The pipeline as a library user meets it: `@sluice/pipeline` and a Redis layer (the
 * in-memory one here; the live one in `Live.test.ts`). Whatever happens to a turn, it
 * ends in both streams with a terminal entry, and the run says how.
 */
import { describe, expect, it } from "@effect/vitest"
import { Accumulator } from "@sluice/accumulator"
import { StreamEvent } from "@sluice/core"
import { RedisStreams, RedisStreamsMemory } from "@sluice/redis"
import { transcriptPath } from "@sluice/testing/fixtures"
import { TurnControl, TurnEnding, TurnEntry, TurnKeys, TurnLease, TurnMetrics } from "@sluice/turns"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { TurnContext, TurnPipeline, TurnSource } from "../src/index.js"

// anthropic-text.sse is shared (@sluice/testing/fixtures), openai-chat-tools.sse the package's own
const fixture = (name: string) =>
  new Uint8Array(readFileSync(name === "anthropic-text.sse" ? transcriptPath(name) : join(__dirname, "fixtures", name)))
const prefix = "pipeline-test"
const store = RedisStreamsMemory.layer
const pipeline = TurnPipeline.layer({ publisher: { prefix } }).pipe(Layer.provideMerge(store))

/** The payloads of a turn's two streams, decoded. */
const streams = (turnId: string) =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams.RedisStreams
    const a = yield* Effect.forEach(
      yield* redis.xrange(TurnKeys.eventsKey(prefix, turnId), "-", "+"),
      TurnEntry.toStreamEvent
    )
    const bEntries = yield* redis.xrange(TurnKeys.upsertsKey(prefix, turnId), "-", "+")
    const b = yield* Effect.forEach(bEntries, TurnEntry.toStreamBMessage)
    return {
      a: a.map((event) => event.payload),
      b: b.map((
        message
      ): { readonly type: string; readonly status?: string; readonly error?: { readonly code: string } } =>
        JSON.parse(message.payload)
      ),
      finalB: bEntries.filter(TurnEntry.isFinal).length,
      // Stream B keeps each item's last upsert; its last id counts every message written
      writtenB: Number(bEntries.at(-1)?.id.slice(2) ?? 0)
    }
  })

/** A source that sends the first `bytes` of a transcript and then waits forever. */
const hanging = (name: string, bytes: number) =>
  TurnSource.sse("anthropic", Stream.concat(Stream.make(fixture(name).subarray(0, bytes)), Stream.never))

/** Bytes up to (not including) the text's `n`-th occurrence of `marker`. */
const upTo = (name: string, marker: string, n: number) => {
  const text = new TextDecoder().decode(fixture(name))
  let at = -1
  for (let i = 0; i < n; i++) at = text.indexOf(marker, at + 1)
  return at
}

/** A turn whose provider stalls mid-message, running in a fiber once its first upsert is out. */
const startedMidMessage = Effect.gen(function*() {
  const context = yield* TurnContext.make()
  const started = yield* Deferred.make<void>()
  const fiber = yield* TurnPipeline.run(
    context,
    hanging("anthropic-text.sse", upTo("anthropic-text.sse", "event: content_block_stop", 1)),
    {
      onMessage: () => Deferred.succeed(started, undefined)
    }
  ).pipe(Effect.forkChild)
  yield* Deferred.await(started)
  return { context, fiber }
})

describe("TurnPipeline", () => {
  it.effect("a transcript runs to a complete turn: Stream A, the fold and Stream B agree", () =>
    Effect.gen(function*() {
      const context = yield* TurnContext.make()
      const seen: Array<string> = []
      const result = yield* TurnPipeline.run(
        context,
        TurnSource.sse("anthropic", Stream.make(fixture("anthropic-text.sse"))),
        {
          onMessage: (message) => Effect.sync(() => seen.push(message.payloadType))
        }
      )
      expect(result.turn.status).toBe("complete")
      expect(result.turn.turnId).toBe(context.turnId)
      expect(Option.isNone(result.stopped)).toBe(true)
      const { a, b, finalB, writtenB } = yield* streams(context.turnId)
      expect(a[0]).toMatchObject({ type: "response_start", turn_id: context.turnId, thread_id: context.threadId })
      expect(a.at(-1)).toMatchObject({ type: "response_done", status: "complete" })
      expect(b.at(-1)).toMatchObject({ type: "turn_completed", status: "complete" })
      expect([finalB, result.messages, seen.length]).toStrictEqual([1, writtenB, writtenB])
      expect(result.turn.items.map((item) => item.content).join("")).toContain("Hello")
    }).pipe(Effect.provide(pipeline)))

  it.effect("input that is not the wire format: both streams end with error, and the failure is passed on", () =>
    Effect.gen(function*() {
      const context = yield* TurnContext.make()
      const body = new TextEncoder().encode(
        "event: message_start\ndata: {\"type\": \"message_start\", \"message\": 12}\n\n"
      )
      const error = yield* Effect.flip(TurnPipeline.run(context, TurnSource.sse("anthropic", Stream.make(body))))
      expect(error._tag).toBe("WireDecodeError")
      const { a, b, finalB } = yield* streams(context.turnId)
      expect(a.map((payload) => payload.type)).toStrictEqual(["response_start", "response_error", "response_done"])
      expect(a[1]).toMatchObject({ error: { code: "invalid_input" } })
      expect(b.find((payload) => payload.type === "turn_error")).toMatchObject({ error: { code: "invalid_input" } })
      expect(b.at(-1)).toMatchObject({ type: "turn_completed", status: "error" })
      expect(finalB).toBeGreaterThanOrEqual(1)
    }).pipe(Effect.provide(pipeline)))

  it.effect("a body cut inside a data line: the turn ends truncated, what arrived kept, not a failure", () =>
    Effect.gen(function*() {
      const context = yield* TurnContext.make()
      const cut = upTo("anthropic-text.sse", "\"text\":\"", 3) + 12
      const result = yield* TurnPipeline.run(
        context,
        TurnSource.sse("anthropic", Stream.make(fixture("anthropic-text.sse").subarray(0, cut)))
      )
      expect(result.turn.status).toBe("error")
      expect(result.turn.errors.map((error) => error.code)).toStrictEqual(["stream_truncated"])
      expect(result.turn.items[0]?.content).toBe("Hello")
      const { b } = yield* streams(context.turnId)
      expect(b.at(-1)?.type).toMatch(/^turn_(error|completed)$/)
    }).pipe(Effect.provide(pipeline)))

  it.effect("an event the fold refuses mid-chunk: the events before it are kept, both streams end invalid_event_order", () =>
    Effect.gen(function*() {
      const context = yield* TurnContext.make()
      const envelope = { runId: context.runId }
      const start = yield* StreamEvent.make(envelope, {
        type: "response_start",
        response_id: crypto.randomUUID(),
        provider_id: "test",
        model_id: "m",
        turn_id: context.turnId,
        thread_id: context.threadId,
        created_at: 1_700_000_000_000
      })
      const item = yield* StreamEvent.make(envelope, { type: "item_start", item_id: "m1", item_type: "message" })
      const delta = yield* StreamEvent.make(envelope, { type: "item_delta", item_id: "m1", delta_content: "Hi" })
      const ghost = yield* StreamEvent.make(envelope, { type: "item_delta", item_id: "ghost", delta_content: "x" })
      const after = yield* StreamEvent.make(envelope, { type: "item_delta", item_id: "m1", delta_content: "!" })
      // one chunk: the refused event in its middle
      const source = TurnSource.events(() => Stream.fromArray([start, item, delta, ghost, after]))
      const error = yield* Effect.flip(TurnPipeline.run(context, source))
      expect(error._tag).toBe("AccumulatorError")
      const { a, b } = yield* streams(context.turnId)
      expect(a.map((payload) => payload.type)).toStrictEqual([
        "response_start",
        "item_start",
        "item_delta",
        "item_done",
        "response_error",
        "response_done"
      ])
      expect(a.find((payload) => payload.type === "response_error")).toMatchObject({
        error: { code: "invalid_event_order" }
      })
      expect(b.find((payload) => payload.type === "turn_error")).toMatchObject({
        error: { code: "invalid_event_order" }
      })
      expect(b.at(-1)).toMatchObject({ type: "turn_completed", status: "error" })
    }).pipe(Effect.provide(pipeline)))

  it.effect("input that ends without ending the turn: aborted in both streams", () =>
    Effect.gen(function*() {
      const context = yield* TurnContext.make()
      const result = yield* TurnPipeline.run(context, TurnSource.events(() => Stream.empty))
      expect(result.turn.status).toBe("aborted")
      const { a, b } = yield* streams(context.turnId)
      expect(a.map((payload) => payload.type)).toStrictEqual(["response_start", "response_done"])
      expect(b.at(-1)).toMatchObject({ type: "turn_completed", status: "aborted" })
    }).pipe(Effect.provide(pipeline)))

  it.effect("stop: open text is kept, a partial tool call is cancelled, the turn ends aborted", () =>
    Effect.gen(function*() {
      const context = yield* TurnContext.make()
      const stop = yield* Deferred.make<"aborted">()
      const firstUpsert = yield* Deferred.make<void>()
      const source = TurnSource.sse(
        "openai-chat",
        Stream.concat(
          Stream.make(fixture("openai-chat-tools.sse").subarray(0, upTo("openai-chat-tools.sse", "arguments", 3))),
          Stream.never
        )
      )
      const fiber = yield* TurnPipeline.run(context, source, {
        stop: Deferred.await(stop),
        onMessage: () => Deferred.succeed(firstUpsert, undefined)
      }).pipe(Effect.forkChild)
      yield* Deferred.await(firstUpsert)
      yield* Deferred.succeed(stop, "aborted")
      const result = yield* Fiber.join(fiber)
      expect(result.stopped).toStrictEqual(Option.some("aborted"))
      expect(result.turn.status).toBe("aborted")
      expect(
        result.turn.items.filter((item) => item.type === "function_call").every((item) => item.status === "cancelled")
      ).toBe(true)
      const { a, b } = yield* streams(context.turnId)
      expect(a.at(-1)).toMatchObject({ type: "response_done", status: "aborted" })
      expect(b.at(-1)).toMatchObject({ type: "turn_completed", status: "aborted" })
      expect(
        b.some((payload) =>
          payload.type === "item_upsert" && (payload as { itemType?: string }).itemType === "tool_call"
        )
      ).toBe(false)
    }).pipe(Effect.provide(pipeline)))

  it.effect("interrupting the run (SIGINT in an app) writes the aborted ending before the fiber ends", () =>
    Effect.gen(function*() {
      const { context, fiber } = yield* startedMidMessage
      yield* Fiber.interrupt(fiber)
      const { a, b } = yield* streams(context.turnId)
      expect(a.at(-1)).toMatchObject({ type: "response_done", status: "aborted" })
      expect(b.at(-1)).toMatchObject({ type: "turn_completed", status: "aborted" })
      expect(b.some((payload) => payload.type === "item_upsert")).toBe(true)
    }).pipe(Effect.provide(pipeline)))

  it.effect("cancel(turnId) in this process, and a cancel request through Redis, end the turn cancelled", () =>
    Effect.gen(function*() {
      for (const how of ["local", "redis"] as const) {
        const { context, fiber } = yield* startedMidMessage
        if (how === "local") yield* TurnPipeline.cancel(context.turnId)
        else yield* TurnControl.requestCancel(prefix, context.turnId)
        const result = yield* Fiber.join(fiber)
        expect([how, result.turn.status, result.stopped]).toStrictEqual([how, "cancelled", Option.some("cancelled")])
        const { a, b } = yield* streams(context.turnId)
        expect(a.at(-1)).toMatchObject({ type: "response_done", status: "cancelled" })
        expect(b.at(-1)).toMatchObject({ type: "turn_completed", status: "cancelled" })
      }
    }).pipe(Effect.provide(pipeline)))

  it.effect("a turn holds its lease while it runs; a lease found lapsed ends the turn with producer_lost", () =>
    Effect.gen(function*() {
      const expiries = Effect.map(Metric.value(TurnMetrics.leaseExpiries("producer")), (state) => state.count)
      const before = yield* expiries
      const { context, fiber } = yield* startedMidMessage
      expect(yield* TurnLease.state(prefix, context.turnId)).toBe("held")
      yield* TestClock.adjust("30 seconds")
      expect(yield* TurnLease.state(prefix, context.turnId)).toBe("held")
      // the process was paused past its lease: the key is gone when it next renews
      const redis = yield* RedisStreams.RedisStreams
      yield* redis.pexpire(TurnKeys.leaseKey(prefix, context.turnId), 0)
      yield* TestClock.adjust("2 seconds")
      const result = yield* Fiber.join(fiber)
      expect(result.stopped).toStrictEqual(Option.some("producer_lost"))
      expect((yield* expiries) - before).toBe(1)
      expect(result.turn.errors.map((error) => error.code)).toStrictEqual(["producer_lost"])
      const { b } = yield* streams(context.turnId)
      expect(b.find((payload) => payload.type === "turn_error")).toMatchObject({ error: { code: "producer_lost" } })
      expect(b.at(-1)).toMatchObject({ type: "turn_completed", status: "error" })
      expect(yield* TurnLease.state(prefix, context.turnId)).toBe("lapsed")
    }).pipe(Effect.provide(pipeline)))

  it.effect(
    "a turn another writer ended while its producer was paused: the producer writes nothing after its last entry and stops producer_lost",
    () =>
      Effect.gen(function*() {
        const { context, fiber } = yield* startedMidMessage
        const redis = yield* RedisStreams.RedisStreams
        const lastOf = (key: string) => Effect.map(redis.xrange(key, "-", "+"), (entries) => entries.at(-1)!.id)
        // paused past its lease: a reader's server found it lapsed and ended the turn
        yield* redis.pexpire(TurnKeys.leaseKey(prefix, context.turnId), 0)
        expect(yield* TurnEnding.end(prefix, context.turnId, TurnEnding.producerLost)).toBe("ended")
        const endedAt = [
          yield* lastOf(TurnKeys.eventsKey(prefix, context.turnId)),
          yield* lastOf(TurnKeys.upsertsKey(prefix, context.turnId))
        ]
        // the producer comes back: its next renewal finds the lease gone, and the
        // ending it would write is refused
        yield* TestClock.adjust("2 seconds")
        const result = yield* Fiber.join(fiber)
        expect([result.turn.status, result.stopped]).toStrictEqual(["error", Option.some("producer_lost")])
        expect(result.turn.errors.map((error) => error.code)).toStrictEqual(["producer_lost"])
        const { a, b, finalB } = yield* streams(context.turnId)
        expect([
          yield* lastOf(TurnKeys.eventsKey(prefix, context.turnId)),
          yield* lastOf(TurnKeys.upsertsKey(prefix, context.turnId))
        ]).toStrictEqual(endedAt)
        expect([a.filter((payload) => payload.type === "response_done").length, finalB]).toStrictEqual([1, 1])
        expect(b.at(-1)).toMatchObject({ type: "turn_completed", status: "error" })
      }).pipe(Effect.provide(pipeline))
  )

  it.effect("a context with a bad id is refused, naming the field", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(TurnContext.make({ turnId: "not-a-uuid" }))
      expect(error._tag).toBe("InvalidTurnContext")
      expect(error.message).toContain("turnId")
    }))

  it.effect("the final turn of a run equals the fold of what Stream A holds", () =>
    Effect.gen(function*() {
      const context = yield* TurnContext.make()
      const result = yield* TurnPipeline.run(
        context,
        TurnSource.sse("openai-chat", Stream.make(fixture("openai-chat-tools.sse")))
      )
      const redis = yield* RedisStreams.RedisStreams
      const events = yield* Effect.forEach(
        yield* redis.xrange(TurnKeys.eventsKey(prefix, context.turnId), "-", "+"),
        TurnEntry.toStreamEvent
      )
      const folded = yield* Accumulator.runTurn(Stream.fromIterable(events))
      expect(result.turn.status).toBe("complete")
      expect(result.turn.items).toStrictEqual(folded.items)
      expect(result.turn.usage).toStrictEqual(folded.usage)
    }).pipe(Effect.provide(pipeline)))
})
