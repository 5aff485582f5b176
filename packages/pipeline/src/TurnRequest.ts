/**
 * A turn asked for over HTTP (`POST /v1/turns`): the provider, the request to send it
 * (`LlmRequest`: model, system, messages, tools, temperature, ...) and, optionally, the
 * thread the turn belongs to. `start` sends it with the provider's live client and
 * runs the turn with `TurnPipeline.start`: it returns with the turn's events once the
 * turn is in Redis (its opening, before the provider is asked), while the pipeline
 * persists both streams.
 *
 * @since 0.3.0
 */
import { LlmRequest, type ProviderClient, ProviderName } from "@sluice/providers"
import type { RedisError } from "@sluice/redis"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as TurnAdmission from "./TurnAdmission.js"
import * as TurnContext from "./TurnContext.js"
import * as TurnPipeline from "./TurnPipeline.js"
import * as TurnSource from "./TurnSource.js"

/**
 * The body of a turn request: an `LlmRequest` with the provider to send it to and,
 * optionally, the turn's thread.
 *
 * @since 0.3.0
 * @category schemas
 */
export const TurnRequestBody = Schema.Struct({
  ...LlmRequest.LlmRequest.fields,
  provider: ProviderName.ProviderName,
  threadId: Schema.optionalKey(Schema.String.check(Schema.isGUID({ expected: "a UUID" })))
}).annotate({ identifier: "TurnRequestBody" })

/**
 * A checked turn request: the provider, the thread if given, and the LLM request with
 * its defaults filled.
 *
 * @since 0.3.0
 * @category models
 */
export interface TurnRequest {
  readonly provider: ProviderName.ProviderName
  readonly threadId?: string | undefined
  readonly request: LlmRequest.LlmRequest
}

/**
 * No client for the provider a request names (its API key is not configured).
 *
 * @since 0.3.0
 * @category errors
 */
export class ProviderUnavailable extends Schema.TaggedError<ProviderUnavailable>()("ProviderUnavailable", {
  provider: ProviderName.ProviderName,
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.provider}: ${this.detail}`
  }
}

// The body's own fields; the rest is the LLM request's (each decoder leaves the
// other's fields alone).
const Head = Schema.Struct({ provider: TurnRequestBody.fields.provider, threadId: TurnRequestBody.fields.threadId })
const decodeHead = Schema.decodeUnknownResult(Head)
const hasProvider = Schema.is(Schema.Struct({ provider: ProviderName.ProviderName }))

/**
 * Checks a request body against `TurnRequestBody`, the LLM request by every rule of
 * `LlmRequest`. Fails with an `LlmRequestError` that names the offending field.
 *
 * @since 0.3.0
 * @category decoding
 */
export const decode = (body: unknown): Result.Result<TurnRequest, LlmRequest.LlmRequestError> => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return Result.fail(new LlmRequest.LlmRequestError({ field: "request", message: "request: expected a JSON object" }))
  }
  const head = decodeHead(body)
  if (Result.isFailure(head)) {
    return Result.fail(
      hasProvider(body)
        ? new LlmRequest.LlmRequestError({ field: "threadId", message: "threadId: expected a UUID" })
        : new LlmRequest.LlmRequestError({
          field: "provider",
          message: `provider: expected one of ${ProviderName.ProviderName.literals.join(", ")}`
        })
    )
  }
  return Result.map(LlmRequest.validateResult(body), (request) => ({ ...head.success, request }))
}

/**
 * Starts the turn a request asks for on the `TurnPipeline` in context: the request is
 * sent with the client `clientFor` gives for its provider, and the turn runs in the
 * pipeline's scope (see `TurnPipeline.start`), or is refused with `AtCapacity` past
 * the pipeline's `maxTurns` or `maxLagMs` (or while it shuts down). The turn is in
 * Redis before the provider is asked: its opening (`response_start` with the request's
 * model and provider) is written first, and `start` returns once it is; when it
 * cannot be written (Redis unavailable), `start` fails with Redis's failure (a
 * `RedisError`, or a `PublishError` once the publisher's retries gave up) and the
 * provider is never asked.
 *
 * @since 0.3.0
 * @category running
 */
export const start = (
  request: TurnRequest,
  clientFor: (provider: ProviderName.ProviderName) => Effect.Effect<ProviderClient.Client, ProviderUnavailable>
): Effect.Effect<
  TurnPipeline.RunningTurn<ProviderClient.StreamError>,
  | ProviderUnavailable
  | TurnContext.InvalidTurnContext
  | TurnAdmission.AtCapacity
  | ProviderClient.StreamError
  | TurnPipeline.PipelineError
  | RedisError.RedisError,
  TurnPipeline.TurnPipeline
> =>
  Effect.gen(function*() {
    const client = yield* clientFor(request.provider)
    const context = yield* TurnContext.make(request.threadId === undefined ? {} : { threadId: request.threadId })
    return yield* TurnPipeline.start(
      context,
      TurnSource.events((turn) =>
        client.stream(request.request, {
          runId: turn.runId,
          turnId: turn.turnId,
          threadId: turn.threadId,
          traceContext: turn.traceContext
        })
      ),
      { opening: { modelId: request.request.model, providerId: request.provider } }
    )
  })
