/**
 * A turn's StreamEvents as the AI SDK's UI message stream (protocol `v1`): the chunks
 * an AI SDK UI (`useChat`, `readUIMessageStream`) folds into one assistant message.
 * A pure, stateful mapping, event by event:
 *
 * | StreamEvent | chunks |
 * |---|---|
 * | `response_start` | `start` (`messageId` = the response id), `start-step` |
 * | message `item_start`, `item_delta`, `item_done` | `text-start`, `text-delta`, `source-url` per web source, `text-end` |
 * | reasoning items | `reasoning-start`, `reasoning-delta`, `reasoning-end` |
 * | function call items | `tool-input-start`, `tool-input-delta`, `tool-input-available` (`providerExecuted` kept) |
 * | function call output `item_done` | `tool-output-available`, or `tool-output-error` when it failed |
 * | error items, `item_error`, `response_error` | `error` (the open parts closed first on `response_error`) |
 * | `response_done` | `finish-step`, then `finish` (complete, error; with `messageMetadata: {usage}` when the event has a usage) or `abort` (aborted, cancelled) |
 *
 * Each frame that ends the chunks of one event carries an `id:` line (the entry's
 * Redis id on `uiMessageSse`, the event's `event_id` on `response`): a reader that
 * resumes after that id (`ResumePoint`) gets exactly the chunks that follow, valid for
 * a message that already holds the earlier ones (no part opened twice).
 *
 * Only `response_done`, the turn's last event (core's `LastEntry`), finishes the
 * message: a failed turn's `response_error` gives its `error` chunk, and the
 * `response_done` (status `error`) that follows it gives `finish` and `[DONE]`.
 *
 * A call's `toolCallId` is its item id, so its output (which names the call by
 * `call_id`) lands on it. User and system messages, script executions and compactions
 * have no place in an assistant message and are left out.
 *
 * @since 0.1.0
 */
import { Ids, Json, type StreamEvent, Usage } from "@sluice/core"
import { EntryId, type RedisError, type StreamEntry } from "@sluice/redis"
import { TurnEntry } from "@sluice/turns"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TurnFeed from "./TurnFeed.js"

const optional = <S extends Schema.Top>(schema: S) => Schema.optionalKey(schema)
const chunk = <T extends string, F extends Schema.Struct.Fields>(type: T, fields: F) =>
  Schema.Struct({ type: Schema.Literal(type), ...fields })

/**
 * The chunks this mapping sends, a subset of the AI SDK's `uiMessageChunkSchema`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const UiMessageChunk = Schema.Union([
  chunk("start", { messageId: optional(Schema.String) }),
  chunk("start-step", {}),
  chunk("text-start", { id: Schema.String }),
  chunk("text-delta", { id: Schema.String, delta: Schema.String }),
  chunk("text-end", { id: Schema.String }),
  chunk("reasoning-start", { id: Schema.String }),
  chunk("reasoning-delta", { id: Schema.String, delta: Schema.String }),
  chunk("reasoning-end", { id: Schema.String }),
  chunk("tool-input-start", {
    toolCallId: Schema.String,
    toolName: Schema.String,
    providerExecuted: optional(Schema.Boolean)
  }),
  chunk("tool-input-delta", { toolCallId: Schema.String, inputTextDelta: Schema.String }),
  chunk("tool-input-available", {
    toolCallId: Schema.String,
    toolName: Schema.String,
    input: Json.JsonValue,
    providerExecuted: optional(Schema.Boolean)
  }),
  chunk("tool-output-available", {
    toolCallId: Schema.String,
    output: Json.JsonValue,
    providerExecuted: optional(Schema.Boolean)
  }),
  chunk("tool-output-error", {
    toolCallId: Schema.String,
    errorText: Schema.String,
    providerExecuted: optional(Schema.Boolean)
  }),
  chunk("source-url", { sourceId: Schema.String, url: Schema.String, title: optional(Schema.String) }),
  chunk("error", { errorText: Schema.String }),
  chunk("finish-step", {}),
  chunk("finish", {
    finishReason: optional(Schema.Literals(["stop", "length", "content-filter", "tool-calls", "error", "other"])),
    messageMetadata: optional(Schema.Struct({ usage: Usage.Usage }))
  }),
  chunk("abort", { reason: optional(Schema.String) })
]).annotate({ identifier: "UiMessageChunk" })

/**
 * @since 0.1.0
 * @category models
 */
export type UiMessageChunk = typeof UiMessageChunk.Type

/**
 * The response headers of a UI message stream (the AI SDK's
 * `UI_MESSAGE_STREAM_HEADERS`).
 *
 * @since 0.1.0
 * @category constants
 */
export const headers = {
  "cache-control": "no-cache, no-transform",
  "x-vercel-ai-ui-message-stream": "v1",
  "x-accel-buffering": "no"
} as const

/**
 * The SSE text of a chunk: `data: <json>`.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = (chunk: UiMessageChunk): string => `data: ${JSON.stringify(chunk)}\n\n`

/**
 * The SSE text of a chunk that ends the chunks of one event: `id: <id>` then
 * `data: <json>`. A reader that has applied it resumes after `id`.
 *
 * @since 0.3.0
 * @category encoding
 */
export const encodeWithId = (chunk: UiMessageChunk, id: string): string =>
  `id: ${id}\ndata: ${JSON.stringify(chunk)}\n\n`

/**
 * The last line of every UI message stream.
 *
 * @since 0.1.0
 * @category constants
 */
export const done = "data: [DONE]\n\n"

type Open = { readonly kind: "text" | "reasoning" } | { readonly kind: "tool"; readonly name: string }

/**
 * The mapping's state: the parts open, and the item id of each call by its `call_id`.
 *
 * @since 0.1.0
 * @category models
 */
export interface State {
  readonly open: ReadonlyMap<string, Open>
  readonly calls: ReadonlyMap<string, string>
}

/**
 * The state before the first event.
 *
 * @since 0.1.0
 * @category constructors
 */
export const initial: State = { open: new Map(), calls: new Map() }

const withOpen = (state: State, id: string, open: Open | undefined): State => {
  const next = new Map(state.open)
  if (open === undefined) next.delete(id)
  else next.set(id, open)
  return { ...state, open: next }
}

// The chunk that closes an open part (a tool call's input stays as streamed).
const closing = (id: string, open: Open): ReadonlyArray<UiMessageChunk> =>
  open.kind === "text"
    ? [{ type: "text-end", id }]
    : open.kind === "reasoning"
    ? [{ type: "reasoning-end", id }]
    : []

const closeAll = (state: State): ReadonlyArray<UiMessageChunk> =>
  [...state.open].flatMap(([id, open]) => closing(id, open))

const errorText = (error: { readonly code: string; readonly message: string }) => `${error.code}: ${error.message}`

const itemStart = (
  state: State,
  start: StreamEvent.PayloadOf<"item_start">
): readonly [State, ReadonlyArray<UiMessageChunk>] => {
  const id = start.item_id
  const initial = start.initial_content ?? ""
  switch (start.item_type) {
    case "message":
      if (start.origin === "user" || start.origin === "system") return [state, []]
      return [withOpen(state, id, { kind: "text" }), [
        { type: "text-start", id },
        ...(initial === "" ? [] : [{ type: "text-delta" as const, id, delta: initial }])
      ]]
    case "reasoning":
      return [withOpen(state, id, { kind: "reasoning" }), [
        { type: "reasoning-start", id },
        ...(initial === "" ? [] : [{ type: "reasoning-delta" as const, id, delta: initial }])
      ]]
    case "function_call": {
      const name = start.name ?? "unknown"
      const args = start.arguments ?? initial
      return [withOpen(state, id, { kind: "tool", name }), [
        { type: "tool-input-start", toolCallId: id, toolName: name },
        ...(args === "" ? [] : [{ type: "tool-input-delta" as const, toolCallId: id, inputTextDelta: args }])
      ]]
    }
    default:
      return [state, []]
  }
}

const itemDelta = (state: State, delta: StreamEvent.PayloadOf<"item_delta">): ReadonlyArray<UiMessageChunk> => {
  const id = delta.item_id
  const open = state.open.get(id)
  if (open === undefined || delta.delta_content === "") return []
  switch (open.kind) {
    case "text":
      return [{ type: "text-delta", id, delta: delta.delta_content }]
    case "reasoning":
      return [{ type: "reasoning-delta", id, delta: delta.delta_content }]
    case "tool":
      return [{ type: "tool-input-delta", toolCallId: id, inputTextDelta: delta.delta_content }]
  }
}

const providerExecuted = (flag: boolean | undefined) => (flag === undefined ? {} : { providerExecuted: flag })

const itemDone = (
  state: State,
  done: StreamEvent.PayloadOf<"item_done">
): readonly [State, ReadonlyArray<UiMessageChunk>] => {
  const item = done.final_item
  const id = done.item_id
  const open = state.open.get(id)
  const closed = withOpen(state, id, undefined)
  switch (item.type) {
    case "message": {
      if (item.origin !== "agent") return [closed, []]
      // an item that never started streaming arrives whole
      const opening: ReadonlyArray<UiMessageChunk> = open === undefined
        ? [
          { type: "text-start", id },
          ...(item.content === "" ? [] : [{ type: "text-delta" as const, id, delta: item.content }])
        ]
        : []
      const sources = (item.sources ?? []).flatMap((source, i): ReadonlyArray<UiMessageChunk> =>
        source.kind === "url" && source.url !== undefined
          ? [{
            type: "source-url",
            sourceId: `${id}:${i}`,
            url: source.url,
            ...(source.title === undefined ? {} : { title: source.title })
          }]
          : []
      )
      return [closed, [...opening, ...sources, { type: "text-end", id }]]
    }
    case "reasoning":
      return [closed, [
        ...(open === undefined
          ? [
            { type: "reasoning-start" as const, id },
            ...(item.content === "" ? [] : [{ type: "reasoning-delta" as const, id, delta: item.content }])
          ]
          : []),
        { type: "reasoning-end", id }
      ]]
    case "function_call": {
      const calls = new Map(state.calls).set(item.call_id, id)
      return [{ ...closed, calls }, [
        ...(open === undefined ? [{ type: "tool-input-start" as const, toolCallId: id, toolName: item.name }] : []),
        {
          type: "tool-input-available",
          toolCallId: id,
          toolName: item.name,
          input: item.arguments === "" ? {} : Json.parseOrString(item.arguments),
          ...providerExecuted(item.provider_executed)
        }
      ]]
    }
    case "function_call_output": {
      const toolCallId = state.calls.get(item.call_id) ?? item.call_id
      return [closed, [
        item.success
          ? {
            type: "tool-output-available",
            toolCallId,
            output: Json.parseOrString(item.output),
            ...providerExecuted(item.provider_executed)
          }
          : {
            type: "tool-output-error",
            toolCallId,
            errorText: item.output,
            ...providerExecuted(item.provider_executed)
          }
      ]]
    }
    case "error":
      return [closed, [{ type: "error", errorText: errorText(item) }]]
    default:
      return [closed, open === undefined ? [] : closing(id, open)]
  }
}

/**
 * One step of the mapping: the state after `event`, and the chunks it makes.
 *
 * @since 0.1.0
 * @category mapping
 */
export const step = (state: State, event: StreamEvent.StreamEvent): readonly [State, ReadonlyArray<UiMessageChunk>] => {
  const payload = event.payload
  switch (payload.type) {
    case "response_start":
      return [state, [{ type: "start", messageId: payload.response_id }, { type: "start-step" }]]
    case "item_start":
      return itemStart(state, payload)
    case "item_delta":
      return [state, itemDelta(state, payload)]
    case "item_done":
      return itemDone(state, payload)
    case "item_error": {
      const open = state.open.get(payload.item_id)
      return [withOpen(state, payload.item_id, undefined), [
        ...(open === undefined ? [] : closing(payload.item_id, open)),
        { type: "error", errorText: errorText(payload.error) }
      ]]
    }
    case "item_cancelled": {
      const open = state.open.get(payload.item_id)
      return [withOpen(state, payload.item_id, undefined), open === undefined ? [] : closing(payload.item_id, open)]
    }
    case "response_done": {
      const ending: UiMessageChunk = payload.status === "aborted" || payload.status === "cancelled"
        ? { type: "abort", reason: payload.status }
        : {
          type: "finish",
          // the AI SDK has no `paused`: a paused turn (to be continued) finishes as `other`
          finishReason: payload.finish_reason === "paused"
            ? "other"
            : payload.finish_reason ?? (payload.status === "error" ? "error" : "stop"),
          ...(payload.usage === undefined ? {} : { messageMetadata: { usage: payload.usage } })
        }
      return [initial, [...closeAll(state), { type: "finish-step" }, ending]]
    }
    case "response_error":
      // not the end: the turn's `response_done` (status `error`) follows and finishes it
      return [{ ...state, open: new Map() }, [
        ...closeAll(state),
        { type: "error", errorText: errorText(payload.error) }
      ]]
  }
}

/**
 * The UI message chunks of a stream of StreamEvents, in order.
 *
 * @since 0.1.0
 * @category mapping
 */
export const chunks = <E, R>(
  events: Stream.Stream<StreamEvent.StreamEvent, E, R>
): Stream.Stream<UiMessageChunk, E, R> =>
  events.pipe(
    Stream.mapAccum(() => initial, step)
  )

const failureText = (error: RedisError.RedisError | Schema.SchemaError): string =>
  Schema.isSchemaError(error)
    ? `invalid_entry: an entry is not a StreamEvent: ${error.message}`
    : `redis_unavailable: the turn's stream was lost: ${error.message}`

/**
 * Where a reader of a turn's UI message stream starts: the turn's start, or after
 * the event it applied last, named by its entry's Redis id (`<ms>-<seq>`, as
 * `uiMessageSse` frames carry) or by its `event_id` (a UUID, as `response` frames
 * carry).
 *
 * @since 0.3.0
 * @category models
 */
export type ResumePoint =
  | { readonly _tag: "Start" }
  | { readonly _tag: "AfterEntry"; readonly entryId: string }
  | { readonly _tag: "AfterEvent"; readonly eventId: string }

/**
 * The turn's start.
 *
 * @since 0.3.0
 * @category constructors
 */
export const fromStart: ResumePoint = { _tag: "Start" }

/**
 * The resume point a `Last-Event-ID` names: an entry id (written as Redis writes
 * it) or an event id (a UUID); `None` for anything else.
 *
 * @since 0.3.0
 * @category decoding
 */
export const parseResumePoint = (text: string): Option.Option<ResumePoint> => {
  if (Ids.isUuid(text)) return Option.some({ _tag: "AfterEvent", eventId: text.toLowerCase() })
  return Option.map(EntryId.parse(text), (id): ResumePoint => ({ _tag: "AfterEntry", entryId: EntryId.format(id) }))
}

interface Positioned {
  readonly id: string
  readonly event: StreamEvent.StreamEvent
}

interface FrameState {
  readonly mapping: State
  // whether the resume point is behind: chunks are sent only then
  readonly sending: boolean
  // whether the turn's last event has been read
  readonly ended: boolean
}

const passes = (resume: ResumePoint, { event, id }: Positioned): "before" | "at" | "after" => {
  switch (resume._tag) {
    case "Start":
      return "after"
    case "AfterEntry":
      return EntryId.isAfter(id, resume.entryId) ? "after" : "before"
    case "AfterEvent":
      return event.event_id.toLowerCase() === resume.eventId ? "at" : "before"
  }
}

// The frames of events, each with the id it is resumed after: the mapping runs from
// the turn's start, and only the chunks of the events past `resume` are sent, so they
// continue a message that holds the earlier ones. The last frame of an event carries
// its id; `[DONE]` follows the chunk of the turn's last event. An event id the turn
// never held is an `error` chunk once the turn has ended.
const framedFrom =
  (resume: ResumePoint) => <E, R>(events: Stream.Stream<Positioned, E, R>): Stream.Stream<string, E, R> =>
    events.pipe(
      Stream.mapAccum(
        (): FrameState => ({ mapping: initial, sending: resume._tag === "Start", ended: false }),
        (state, positioned): readonly [FrameState, ReadonlyArray<string>] => {
          const [mapping, chunks] = step(state.mapping, positioned.event)
          const ended = state.ended || positioned.event.payload.type === "response_done"
          const place = state.sending ? "after" : passes(resume, positioned)
          if (place !== "after") return [{ mapping, sending: place === "at", ended }, []]
          if (chunks.length === 0) return [{ mapping, sending: true, ended }, []]
          // an event's frames as one text: written together, never split by a ping
          return [
            { mapping, sending: true, ended },
            [
              chunks.map((chunk, i) => {
                const text = i === chunks.length - 1 ? encodeWithId(chunk, positioned.id) : encode(chunk)
                return chunk.type === "finish" || chunk.type === "abort" ? text + done : text
              }).join("")
            ]
          ]
        },
        {
          onHalt: (state) =>
            state.ended && !state.sending && resume._tag === "AfterEvent"
              ? [
                encode({
                  type: "error",
                  errorText: `invalid_last_event_id: event ${resume.eventId} is not in the turn`
                })
              ]
              : []
        }
      )
    )

/**
 * The SSE text of a followed Stream A as a UI message stream: the opening comment, a
 * `data:` line per chunk (the last of each entry's chunks with the entry's id in an
 * `id:` line), `: ping` every `heartbeatMs` (the AI SDK's reader skips comments), and
 * `data: [DONE]` after the turn's last event. With a resume point, `entries` are still
 * read from the turn's start (the mapping needs them), and only the chunks of the
 * entries past the point are sent. When following fails for good (Redis lost past the
 * retries, an entry that is not a StreamEvent) it sends an `error` chunk and ends
 * without `[DONE]`; after `idleTimeoutMs` without an event it ends without either (a
 * reader comes back for the turn again). An event id that the turn does not hold
 * gives an `error` chunk (`invalid_last_event_id`) once the turn has ended.
 *
 * @since 0.1.0
 * @category streams
 */
export const uiMessageSse = <R>(
  entries: Stream.Stream<StreamEntry.StreamEntry, RedisError.RedisError, R>,
  options: TurnFeed.SseOptions,
  resume: ResumePoint = fromStart
): Stream.Stream<string, never, R> => {
  const frames = entries.pipe(
    Stream.timeout(Duration.millis(options.idleTimeoutMs)),
    Stream.mapEffect((entry) =>
      Effect.map(TurnEntry.toStreamEvent(entry), (event): Positioned => ({ id: entry.id, event }))
    ),
    framedFrom(resume),
    Stream.catch((error) =>
      Stream.unwrap(Effect.as(
        Effect.logWarning(`closing a UI message stream: ${error.message}`),
        Stream.make(encode({ type: "error", errorText: failureText(error) }))
      ))
    )
  )
  return withHeartbeats(frames, options.heartbeatMs)
}

// The SSE frames of StreamEvents as they come, each event's last frame with its
// `event_id`: the chunk of the turn's last event (`response_done`) is the last, and
// `[DONE]` follows it.
const framed = <E, R>(events: Stream.Stream<StreamEvent.StreamEvent, E, R>): Stream.Stream<string, E, R> =>
  events.pipe(
    Stream.map((event): Positioned => ({ id: event.event_id, event })),
    framedFrom(fromStart)
  )

// The opening comment, the frames, and `: ping` every `heartbeatMs` until they end.
const withHeartbeats = <E, R>(frames: Stream.Stream<string, E, R>, heartbeatMs: number): Stream.Stream<string, E, R> =>
  Stream.merge(
    frames,
    Stream.fromSchedule(Schedule.spaced(Duration.millis(heartbeatMs))).pipe(Stream.as(TurnFeed.ping)),
    { haltStrategy: "left" }
  ).pipe(Stream.prepend([TurnFeed.opening]))

/**
 * A UI message stream response of a turn's StreamEvents as they come, for an
 * application's own handler: `TurnPipeline.start`'s `events` answered while the
 * pipeline persists the turn (`HttpServerResponse.toWeb` makes it a web `Response`).
 * The AI SDK's headers, the opening comment, a `data:` line per chunk (the last of each
 * event's chunks with the event's `event_id` in an `id:` line, which the turn's
 * `GET .../ui-message-stream` takes as a resume point), `: ping` every `heartbeatMs`
 * (15 s), and `data: [DONE]` after the turn's last event.
 *
 * @since 0.3.0
 * @category responses
 */
export const response = (
  events: Stream.Stream<StreamEvent.StreamEvent>,
  options: { readonly heartbeatMs?: number | undefined } = {}
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.stream(Stream.encodeText(withHeartbeats(framed(events), options.heartbeatMs ?? 15_000)), {
    contentType: "text/event-stream",
    headers
  })
