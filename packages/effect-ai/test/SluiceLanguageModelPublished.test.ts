/**
 * `SluiceLanguageModel.layerPublished`: every call of the model also runs as a Sluice
 * turn. Against the loopback provider: after `streamText`, Stream A holds the turn's
 * events to `response_done` and Stream B's last upsert of the message its text; the
 * program's parts are those of the unpublished model on the same transcript (one
 * provider request each); `TurnOptions` names the turn and tells its context; a cancel
 * mid-stream ends the turn `cancelled`, aborts the provider request and fails the call;
 * no fiber is left behind. On the in-memory Redis and on a real `redis-server`.
 */
import { describe, expect, it } from "@effect/vitest"
import { StreamBMessage, type StreamEvent } from "@sluice/core"
import { TurnContext, TurnPipeline } from "@sluice/pipeline"
import { ProviderClient } from "@sluice/providers"
import { RedisStreams, RedisStreamsMemory } from "@sluice/redis"
import * as RedisStreamsLive from "@sluice/redis/RedisStreamsLive"
import { trackFibers } from "@sluice/testing/fibers"
import { type Reply, serve } from "@sluice/testing/providers"
import { TurnEntry, TurnKeys } from "@sluice/turns"
import * as AiError from "effect/ai/AiError"
import * as LanguageModel from "effect/ai/LanguageModel"
import type * as Response from "effect/ai/Response"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import { inject } from "vitest"
import { SluiceLanguageModel } from "../src/index.js"

const prefix = `published-${randomUUID().slice(0, 8)}`
const deltas = ["The sky ", "is blue ", "today."]

/** An Anthropic Messages turn of one text block, streamed in `deltas`. */
const transcript = [
  `event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"usage":{"input_tokens":5,"output_tokens":1}}}`,
  `event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
  ...deltas.map((text) =>
    `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":${
      JSON.stringify(text)
    }}}`
  ),
  `event: content_block_stop\ndata: {"type":"content_block_stop","index":0}`,
  `event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7}}`,
  `event: message_stop\ndata: {"type":"message_stop"}`
].map((event) => `${event}\n\n`).join("")

const apiKeys: readonly [Redacted.Redacted<string>] = [Redacted.make("key-a")]
const modelOptions = { model: "claude-test", maxTokens: 256 }

/** The live client of the loopback server, which answers with `replies`. */
const served = (replies: ReadonlyArray<Reply>) =>
  Effect.gen(function*() {
    const server = yield* serve(replies)
    const client = ProviderClient.layer({
      provider: "anthropic",
      apiKeys,
      baseUrl: server.url,
      retry: { maxRetries: 0 }
    }).pipe(Layer.provide(FetchHttpClient.layer))
    return { server, client }
  })

const streamA = (turnId: string) =>
  RedisStreams.RedisStreams.use((redis) => redis.xrange(TurnKeys.eventsKey(prefix, turnId), "-", "+")).pipe(
    Effect.flatMap((entries) => Effect.forEach(entries, TurnEntry.toStreamEvent))
  )

const streamB = (turnId: string) =>
  RedisStreams.RedisStreams.use((redis) => redis.xrange(TurnKeys.upsertsKey(prefix, turnId), "-", "+")).pipe(
    Effect.flatMap((entries) => Effect.forEach(entries, TurnEntry.toStreamBMessage)),
    Effect.flatMap((messages) => Effect.forEach(messages, (message) => StreamBMessage.decodePayload(message.payload)))
  )

const pipelineOn = (redis: Layer.Layer<RedisStreams.RedisStreams, unknown>) =>
  TurnPipeline.layer({ publisher: { prefix } }).pipe(Layer.provideMerge(redis))

/** What a part says, without the ids and times a run draws afresh. */
const shapeOf = (part: Response.AnyPart): unknown => {
  switch (part.type) {
    case "response-metadata":
      return { type: part.type, modelId: part.modelId }
    case "text-start":
    case "text-end":
      return { type: part.type }
    case "text-delta":
      return { type: part.type, delta: part.delta }
    case "finish":
      return { type: part.type, reason: part.reason, usage: part.usage }
    default:
      return { type: part.type }
  }
}

/**
 * A first published call, before the fibers are counted: the live Redis connections
 * start their shared fibers (a reader's line) with the first turn, and those are the
 * pipeline's for its lifetime, not a call's.
 */
const warm = (client: Layer.Layer<ProviderClient.ProviderClient>) =>
  LanguageModel.generateText({ prompt: "warm" }).pipe(
    Effect.provide(SluiceLanguageModel.layerPublished(modelOptions).pipe(Layer.provide(client)))
  )

const sse: Reply = { _tag: "sse", body: transcript }

const suite = (name: string, redis: Layer.Layer<RedisStreams.RedisStreams, unknown>) =>
  describe(`SluiceLanguageModel.layerPublished, ${name}`, () => {
    it.effect(
      "streamText: the program's parts as unpublished; Stream A to response_done, Stream B the text",
      () =>
        Effect.gen(function*() {
          const published = yield* served([sse, sse])
          const plain = yield* served([sse])
          const told = yield* Deferred.make<TurnContext.TurnContext>()
          const turnId = randomUUID()
          const threadId = randomUUID()
          yield* warm(published.client)
          const fibers = yield* trackFibers
          const parts = yield* fibers.track(
            LanguageModel.streamText({ prompt: "What colour is the sky?" }).pipe(
              Stream.runCollect,
              Effect.provideService(SluiceLanguageModel.TurnOptions, {
                turnId,
                threadId,
                onTurn: (turn) => Deferred.succeed(told, turn)
              }),
              Effect.provide(
                SluiceLanguageModel.layerPublished(modelOptions).pipe(Layer.provide(published.client))
              )
            )
          )
          const unpublished = yield* LanguageModel.streamText({ prompt: "What colour is the sky?" }).pipe(
            Stream.runCollect,
            Effect.provide(SluiceLanguageModel.layerWithClient(modelOptions).pipe(Layer.provide(plain.client)))
          )
          expect(parts.map(shapeOf)).toStrictEqual(unpublished.map(shapeOf))
          expect(parts.filter((part) => part.type === "text-delta").map((part) => part.delta)).toStrictEqual(deltas)
          // one provider request: the turn's source and the program read the same events
          expect(published.server.requests()).toHaveLength(2) // the warm-up's and the call's
          // the turn, named as the program asked, told once it was in Redis
          const turn = yield* Deferred.await(told)
          expect([turn.turnId, turn.threadId, turn.prefix]).toStrictEqual([turnId, threadId, undefined])
          const events = yield* streamA(turnId)
          expect(events[0]?.payload).toMatchObject({ type: "response_start", model_id: "claude-test" })
          expect(events.at(-1)?.payload).toMatchObject({ type: "response_done", status: "complete" })
          expect(events.filter((event) => event.payload.type === "item_delta")).toHaveLength(deltas.length)
          const payloads = yield* streamB(turnId)
          const upserts = payloads.filter((payload) => payload.type === "item_upsert")
          expect(upserts.at(-1)).toMatchObject({
            changeType: "completed",
            itemType: "message",
            content: deltas.join(""),
            threadId
          })
          expect(payloads.at(-1)).toMatchObject({ type: "turn_completed" })
          // the call's run and the turn's fibers have all ended
          expect(yield* fibers.active).toBe(0)
        }).pipe(Effect.provide(pipelineOn(redis))),
      30_000
    )

    it.effect(
      "generateText: the text, and the turn in Redis under a fresh id told by the layer's onTurn",
      () =>
        Effect.gen(function*() {
          const { client } = yield* served([sse])
          const told = yield* Deferred.make<TurnContext.TurnContext>()
          const response = yield* LanguageModel.generateText({ prompt: "What colour is the sky?" }).pipe(
            Effect.provide(
              SluiceLanguageModel.layerPublished({
                ...modelOptions,
                onTurn: (turn) => Deferred.succeed(told, turn)
              }).pipe(Layer.provide(client))
            )
          )
          expect(response.text).toBe(deltas.join(""))
          const turn = yield* Deferred.await(told)
          const events = yield* streamA(turn.turnId)
          expect(events.at(-1)?.payload).toMatchObject({ type: "response_done", status: "complete" })
        }).pipe(Effect.provide(pipelineOn(redis))),
      30_000
    )

    it.effect(
      "a call read no further ends its turn aborted and aborts the provider request",
      () =>
        Effect.gen(function*() {
          const { server, client } = yield* served([{ _tag: "hang", body: transcript, events: 3 }])
          const turnId = randomUUID()
          const parts = yield* LanguageModel.streamText({ prompt: "What colour is the sky?" }).pipe(
            Stream.takeUntil((part) => part.type === "text-delta"),
            Stream.runCollect,
            Effect.provideService(SluiceLanguageModel.TurnOptions, { turnId }),
            Effect.provide(SluiceLanguageModel.layerPublished(modelOptions).pipe(Layer.provide(client)))
          )
          yield* server.hungClosed
          expect(parts.at(-1)).toMatchObject({ type: "text-delta", delta: deltas[0] })
          const events = yield* streamA(turnId)
          expect(events.at(-1)?.payload).toMatchObject({ type: "response_done", status: "aborted" })
        }).pipe(Effect.provide(pipelineOn(redis))),
      30_000
    )

    it.effect(
      "a cancel mid-stream ends the turn cancelled, aborts the request and fails the call",
      () =>
        Effect.gen(function*() {
          // the provider sends the start and the first delta, then stalls
          const { server, client } = yield* served([sse, { _tag: "hang", body: transcript, events: 3 }])
          const turnId = randomUUID()
          const seen: Array<Response.StreamPart<{}>> = []
          yield* warm(client)
          const fibers = yield* trackFibers
          const call = yield* LanguageModel.streamText({ prompt: "What colour is the sky?" }).pipe(
            Stream.runForEach((part) => Effect.sync(() => seen.push(part))),
            Effect.provideService(SluiceLanguageModel.TurnOptions, { turnId }),
            Effect.provide(SluiceLanguageModel.layerPublished(modelOptions).pipe(Layer.provide(client))),
            fibers.track,
            Effect.forkChild
          )
          yield* server.hungWritten
          // the first delta reached the program: the turn runs
          while (!seen.some((part) => part.type === "text-delta")) yield* Effect.yieldNow
          yield* TurnPipeline.cancel(turnId)
          const exit = yield* Fiber.await(call)
          yield* server.hungClosed
          expect(Exit.isFailure(exit)).toBe(true)
          const error = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
          const failure = error?._tag === "Fail" ? error.error : undefined
          expect(AiError.isAiError(failure)).toBe(true)
          if (!AiError.isAiError(failure)) return
          expect(failure.reason._tag).toBe("UnknownError")
          expect(failure.reason).toMatchObject({ metadata: { sluice: { turnId, stopped: "cancelled" } } })
          const events: ReadonlyArray<StreamEvent.StreamEvent> = yield* streamA(turnId)
          expect(events.at(-1)?.payload).toMatchObject({ type: "response_done", status: "cancelled" })
          // the text that arrived is kept
          expect(events.some((event) => event.payload.type === "item_done")).toBe(true)

          expect(yield* fibers.active).toBe(0)
        }).pipe(Effect.provide(pipelineOn(redis))),
      30_000
    )
  })

suite("on RedisStreamsMemory", RedisStreamsMemory.layer)
suite("on RedisStreamsLive", RedisStreamsLive.layer({ url: inject("redisUrl") }))
