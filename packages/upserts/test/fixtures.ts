/**
 * Event builders and a stage driver for the tests.
 */
import type { OutputItem, StreamBMessage, UIUpsert, Usage } from "@sluice/core"
import { Ids, StreamEvent } from "@sluice/core"
import type * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { yieldToEventLoop } from "../../../scripts/eventLoop.js"
import type { UpsertOptionsInput } from "../src/UpsertOptions.js"
import * as UpsertStream from "../src/UpsertStream.js"

export const runId = "0b6f1c1e-6a57-4a43-9d3c-6a2f8d1f5b01"
export const turnId = "5a1c2b3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
export const threadId = "7d6c5b4a-3f2e-4d1c-8b0a-9f8e7d6c5b4a"

export const event = (payload: StreamEvent.Payload): StreamEvent.StreamEvent =>
  StreamEvent.envelope({ runId }, payload, Ids.generateEventId(), 0)

export const responseStart = (providerId = "anthropic", modelId = "claude-test") =>
  event({
    type: "response_start",
    response_id: runId,
    turn_id: turnId,
    thread_id: threadId,
    model_id: modelId,
    provider_id: providerId,
    created_at: 0
  })

export const itemStart = (
  itemId: string,
  itemType: OutputItem.ItemType,
  extra: {
    readonly initial_content?: string
    readonly name?: string
    readonly arguments?: string
    readonly code?: string
    readonly origin?: OutputItem.MessageOrigin
  } = {}
) => event({ type: "item_start", item_id: itemId, item_type: itemType, ...extra })

export const delta = (itemId: string, text: string) =>
  event({ type: "item_delta", item_id: itemId, delta_content: text })

export const done = (itemId: string, finalItem: OutputItem.OutputItem) =>
  event({ type: "item_done", item_id: itemId, final_item: finalItem })

export const messageDone = (itemId: string, content: string, origin: OutputItem.MessageOrigin = "agent") =>
  done(itemId, { type: "message", id: itemId, content, origin })

export const reasoningDone = (itemId: string, content: string) =>
  done(itemId, { type: "reasoning", id: itemId, content })

export const callDone = (itemId: string, name: string, args: string, callId: string) =>
  done(itemId, { type: "function_call", id: itemId, call_id: callId, name, arguments: args })

export const outputDone = (itemId: string, callId: string, output: string, success = true) =>
  done(itemId, { type: "function_call_output", id: itemId, call_id: callId, output, success })

export const itemError = (itemId: string, code: string, message: string) =>
  event({ type: "item_error", item_id: itemId, error: { code, message } })

export const cancelled = (itemId: string) => event({ type: "item_cancelled", item_id: itemId })

export const responseDone = (status: StreamEvent.ResponseStatus = "complete", usage?: Usage.Usage) =>
  event({
    type: "response_done",
    response_id: runId,
    status,
    finish_reason: status === "complete" ? "stop" : "error",
    ...(usage === undefined ? {} : { usage })
  })

export const responseError = (code: string, message: string) =>
  event({ type: "response_error", response_id: runId, error: { code, message } })

/**
 * Runs the stage over a finite list of events and collects its output, after a turn
 * of the event loop (property tests run this hundreds of times).
 */
export const runStage = (events: ReadonlyArray<StreamEvent.StreamEvent>, options?: UpsertOptionsInput) =>
  Effect.andThen(
    yieldToEventLoop,
    Stream.fromIterable(events).pipe(UpsertStream.upserts(options), Stream.runCollect)
  )

/** A payload and the clock time at which the consumer received it. */
export interface Received {
  readonly at: number
  readonly payload: StreamBMessage.UIPayload
}

/**
 * Drives a running stage: events go in one at a time, payloads come out stamped with
 * the clock time at which they arrived.
 */
export const startStage = (options?: UpsertOptionsInput) =>
  Effect.gen(function*() {
    const input = yield* Queue.make<StreamEvent.StreamEvent, Cause.Done>()
    const received = yield* Queue.unbounded<Received>()
    const fiber = yield* Stream.fromQueue(input).pipe(
      UpsertStream.upserts(options),
      Stream.runForEach((payload) =>
        Effect.flatMap(Clock.currentTimeMillis, (at) => Queue.offer(received, { at, payload }))
      ),
      Effect.forkChild
    )
    const settle = Effect.repeat(Effect.yieldNow, { times: 50 })
    return {
      send: (...events: ReadonlyArray<StreamEvent.StreamEvent>) =>
        Effect.andThen(Queue.offerAll(input, events), settle),
      end: Effect.andThen(Queue.end(input), Fiber.join(fiber)),
      fiber,
      settle,
      take: (n: number) => Effect.replicateEffect(Queue.take(received), n),
      /** Everything received so far, without waiting. */
      drain: Effect.andThen(settle, Queue.clear(received))
    }
  })

export const contents = (received: ReadonlyArray<Received>) =>
  received.map((
    { payload }
  ) => (payload.type === "item_upsert" ? `${payload.changeType}:${payload.content}` : payload.type))

/** An expected upsert of the test turn. */
export const upsert = (
  itemId: string,
  itemType: UIUpsert.UIUpsertItemType,
  changeType: UIUpsert.UIUpsertChangeType,
  content: string,
  extra: Partial<UIUpsert.UIUpsert> = {}
): UIUpsert.UIUpsert => ({ type: "item_upsert", turnId, threadId, itemId, itemType, changeType, content, ...extra })

export const turnStarted = (providerId = "anthropic", modelId = "claude-test"): StreamBMessage.UIPayload => ({
  type: "turn_started",
  turnId,
  threadId,
  modelId,
  providerId
})

export const turnCompleted = (status: StreamEvent.ResponseStatus = "complete"): StreamBMessage.UIPayload => ({
  type: "turn_completed",
  turnId,
  threadId,
  status
})

export const turnError = (code: string, message: string): StreamBMessage.UIPayload => ({
  type: "turn_error",
  turnId,
  threadId,
  error: { code, message }
})

export { trackFibers } from "../../../scripts/trackFibers.js"
