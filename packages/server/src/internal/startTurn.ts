/**
 * `POST /v1/turns`: starts a turn with the server's `TurnStarter` and answers with
 * it as the AI SDK's UI message stream, the turn's id in `x-sluice-turn-id` (and its
 * snapshot's address in `Location`), while the pipeline persists both streams.
 *
 * The body is read within `maxBodyBytes` and parsed with a bound on its nesting
 * (`Json.parseBounded`: 128 levels, counted over the text before it is parsed), so no
 * body can overflow the stack of the request checks. The starter returns once the turn
 * is in Redis, so every failure to write it is an error status before any header
 * (`redis_unavailable`, 503); once the headers are out, the answer always ends with
 * the turn's last event and `[DONE]`: when the starter's events end without it (Redis
 * lost mid-turn, the server stopping past its budget), an error chunk and a clean end
 * are made here for this answer alone (docs/http.md#starting-a-turn).
 *
 * @internal
 */
import { Ids, Json, LastEntry, StreamEvent } from "@sluice/core"
import { RequestBody } from "@sluice/durable-streams"
import { TurnEnding } from "@sluice/turns"
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { ApiError } from "../ApiError.js"
import type * as TurnStarter from "../TurnStarter.js"
import * as UiMessageStream from "../UiMessageStream.js"
import { CurrentCaller } from "./handlers.js"

/** The header that names a started turn. */
export const turnIdHeader = "x-sluice-turn-id"

/**
 * The ending told to the reader of a started turn's answer when the turn's events end
 * without its last event (it was not written: its own ending, once written, is in the
 * turn's streams).
 *
 * @internal
 */
export const unfinished: TurnEnding.Ending = {
  code: "turn_unfinished",
  message: "this answer ended before the turn's last event was written (Redis was lost, or the server stopped); " +
    "the turn's own ending is in its streams once written"
}

/**
 * A started turn's events, ending with its last event: when they end without it, the
 * turn's `response_error` (`unfinished`) and `response_done` (status `error`) follow,
 * made for this reader alone.
 *
 * @internal
 */
export const endedEvents = (events: Stream.Stream<StreamEvent.StreamEvent>): Stream.Stream<StreamEvent.StreamEvent> =>
  Stream.suspend(() => {
    let last: StreamEvent.StreamEvent | undefined
    return events.pipe(
      Stream.mapArray((chunk) => {
        last = chunk[chunk.length - 1]
        return chunk
      }),
      Stream.concat(Stream.suspend(() => {
        if (last !== undefined && LastEntry.isLastEvent(last)) return Stream.empty
        const context = { runId: last?.run_id ?? Ids.generateEventId(), traceContext: last?.trace_context ?? {} }
        return Stream.fromEffect(
          Effect.forEach(
            TurnEnding.streamAEnding(context.runId, unfinished),
            (payload) => StreamEvent.make(context, payload)
          )
        ).pipe(Stream.flatMap(Stream.fromIterable))
      }))
    )
  })

/**
 * Reads a request's body within `maxBodyBytes` (413 beyond) and parses it with a bound
 * on its nesting (`Json.parseBounded`): 400 `invalid_request` for a body that is not
 * JSON or is nested too deeply.
 *
 * @internal
 */
export const readJsonBody = (maxBodyBytes: number) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const bytes = yield* Effect.mapError(
      RequestBody.read(request, maxBodyBytes),
      (error) =>
        new ApiError({
          code: error._tag === "BodyTooLarge" ? "payload_too_large" : "invalid_request",
          message: error.message
        })
    )
    const parsed = Json.parseBounded(new TextDecoder().decode(bytes))
    if (Result.isFailure(parsed)) {
      return yield* new ApiError({
        code: "invalid_request",
        message: parsed.failure._tag === "JsonTooDeep"
          ? `the body is too deeply nested: ${parsed.failure.message}`
          : `the body is not JSON: ${parsed.failure.message}`
      })
    }
    return parsed.success
  })

/**
 * The handler, with a body limit of `maxBodyBytes` (413 beyond it, unread); without a
 * starter, 501.
 *
 * @internal
 */
export const startTurn = (maxBodyBytes: number, starter: Option.Option<TurnStarter.TurnStarterService>) =>
  Effect.gen(function*() {
    const credentials = yield* CurrentCaller
    if (credentials.thread !== undefined) {
      return yield* new ApiError({
        code: "forbidden",
        message: "a thread token starts turns in its thread only: POST /v1/threads/:threadId/turns"
      })
    }
    if (!credentials.mayWrite) {
      return yield* new ApiError({
        code: "forbidden",
        message: "this token may only read: starting a turn needs a bearer token that is not read-only"
      })
    }
    if (Option.isNone(starter)) {
      return yield* new ApiError({ code: "not_implemented", message: "this server starts no turns" })
    }
    const body = yield* readJsonBody(maxBodyBytes)
    const started = yield* starter.value.start(body)
    return HttpServerResponse.setHeaders(UiMessageStream.response(endedEvents(started.events)), {
      [turnIdHeader]: started.turnId,
      location: `/v1/turns/${started.turnId}`
    })
  })
