/**
 * `POST /v1/turns`: starts a turn with the server's `TurnStarter` and answers with
 * it as the AI SDK's UI message stream, the turn's id in `x-sluice-turn-id` (and its
 * snapshot's address in `Location`), while the pipeline persists both streams.
 *
 * @internal
 */
import { RequestBody } from "@sluice/durable-streams"
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Option from "effect/Option"
import { ApiError } from "../ApiError.js"
import type * as TurnStarter from "../TurnStarter.js"
import * as UiMessageStream from "../UiMessageStream.js"
import { CurrentCaller } from "./handlers.js"

/** The header that names a started turn. */
export const turnIdHeader = "x-sluice-turn-id"

/**
 * The handler, with a body limit of `maxBodyBytes` (413 beyond it, unread); without a
 * starter, 501.
 *
 * @internal
 */
export const startTurn = (maxBodyBytes: number, starter: Option.Option<TurnStarter.TurnStarterService>) =>
  Effect.gen(function*() {
    if (!(yield* CurrentCaller).mayWrite) {
      return yield* new ApiError({
        code: "forbidden",
        message: "this token may only read: starting a turn needs a bearer token that is not read-only"
      })
    }
    if (Option.isNone(starter)) {
      return yield* new ApiError({ code: "not_implemented", message: "this server starts no turns" })
    }
    const request = yield* HttpServerRequest.HttpServerRequest
    const bytes = yield* Effect.mapError(
      RequestBody.read(request, maxBodyBytes),
      (error) =>
        new ApiError({
          code: error._tag === "BodyTooLarge" ? "payload_too_large" : "invalid_request",
          message: error.message
        })
    )
    const body = yield* Effect.try({
      try: (): unknown => JSON.parse(new TextDecoder().decode(bytes)),
      catch: (error) =>
        new ApiError({
          code: "invalid_request",
          message: `the body is not JSON: ${error instanceof Error ? error.message : String(error)}`
        })
    })
    const started = yield* starter.value.start(body)
    return HttpServerResponse.setHeaders(UiMessageStream.response(started.events), {
      [turnIdHeader]: started.turnId,
      location: `/v1/turns/${started.turnId}`
    })
  })
