/**
 * One call of the model run as a Sluice turn: the provider's events, read once by the
 * turn's source, are handed to the call as they come while the pipeline publishes them
 * (Stream A, Stream B, the lease, cancels); the call ends once the turn has ended in
 * Redis, and fails when the turn was stopped (a cancel) or could not be published.
 *
 * @internal
 */
import type { StreamEvent } from "@sluice/core"
import { type StopReason, TurnContext, type TurnPipeline, TurnSource } from "@sluice/pipeline"
import type { LlmRequest, Normalizer, ProviderClient } from "@sluice/providers"
import * as AiError from "effect/ai/AiError"
import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { aiErrorOfStream, invalidPrompt } from "./errors.js"

/**
 * What a published call needs: the pipeline, the layer's settings and the call's own.
 *
 * @internal
 */
export interface Publish {
  readonly prefix?: string | undefined
  readonly agentId?: string | undefined
  readonly onTurn?: ((turn: TurnContext.TurnContext) => Effect.Effect<void>) | undefined
}

const module = "SluiceLanguageModel"

const isStreamError = (error: { readonly _tag: string }): error is ProviderClient.StreamError =>
  error._tag === "LlmRequestError" || error._tag === "WireDecodeError" || error._tag === "SseError"

/**
 * What a turn's run failed with, as the call's `AiError`: the provider client's own
 * failures as the unpublished model gives them; a turn refused at capacity as a
 * retryable `InternalProviderError`; Redis or the pipeline failing as `UnknownError`.
 */
const aiErrorOfRun = (
  error: { readonly _tag: string; readonly message: string },
  turnId: string,
  method: string
): AiError.AiError => {
  if (isStreamError(error)) return aiErrorOfStream(error, method)
  const description = `sluice turn ${turnId} could not be published: ${error.message}`
  return AiError.make({
    module,
    method,
    reason: error._tag === "AtCapacity"
      ? new AiError.InternalProviderError({ description })
      : new AiError.UnknownError({ description })
  })
}

/**
 * The failure of a call whose turn was stopped before its end: an `UnknownError` (not
 * retryable) naming the turn and why it stopped, both also in its metadata under
 * `sluice`.
 *
 * @internal
 */
export const stoppedError = (turnId: string, reason: StopReason.StopReason, method: string): AiError.AiError =>
  AiError.make({
    module,
    method,
    reason: new AiError.UnknownError({
      description: `sluice turn ${turnId} stopped: ${reason}`,
      metadata: { sluice: { turnId, stopped: reason } }
    })
  })

/**
 * The events of one call, published as a turn of the `pipeline` with the context
 * `input` gives (fresh ids for those not given).
 *
 * @internal
 */
export const publishedEvents = (
  client: ProviderClient.Client,
  pipeline: TurnPipeline.TurnPipelineService,
  publish: Publish,
  input: TurnContext.TurnContextInput & Publish,
  request: LlmRequest.LlmRequest,
  normalize: Normalizer.NormalizeOptions,
  method: string
): Stream.Stream<StreamEvent.StreamEvent, AiError.AiError> =>
  Stream.unwrap(Effect.gen(function*() {
    const { agentId, onTurn, ...ids } = input
    const prefix = ids.prefix ?? publish.prefix
    const context = yield* TurnContext.make({ ...ids, ...(prefix === undefined ? {} : { prefix }) }).pipe(
      Effect.mapError((error) => invalidPrompt(error.message, method))
    )
    // the provider's events, as the turn's source reads them, for the call
    const events = yield* Queue.unbounded<StreamEvent.StreamEvent, Cause.Done>()
    const source = TurnSource.events((turn) =>
      client.stream(request, {
        ...normalize,
        runId: turn.runId,
        turnId: turn.turnId,
        threadId: turn.threadId,
        traceContext: turn.traceContext
      }).pipe(Stream.tap((event) => Queue.offer(events, event)))
    )
    // told once the turn is in Redis: its opening is the first chunk Stream A confirms
    let told = false
    const tell = Effect.suspend(() => {
      if (told) return Effect.void
      told = true
      return Effect.andThen(publish.onTurn?.(context) ?? Effect.void, onTurn?.(context) ?? Effect.void)
    })
    const agent = agentId ?? publish.agentId
    // in the call's scope: a call that goes away (interrupted, or read no further)
    // interrupts the run, which ends the turn `aborted`
    const run = yield* Effect.forkScoped(pipeline.run(context, source, {
      opening: {
        modelId: request.model,
        providerId: client.provider,
        ...(agent === undefined ? {} : { agentId: agent })
      },
      onEvents: () => tell
    }))
    // whichever way the turn ends, the call has had every event the source read
    run.addObserver(() => Queue.endUnsafe(events))
    const ended = Effect.gen(function*() {
      const result = yield* Fiber.join(run).pipe(
        Effect.mapError((error) => aiErrorOfRun(error, context.turnId, method))
      )
      return yield* Option.match(result.stopped, {
        onNone: () => Effect.void,
        onSome: (reason) => Effect.fail(stoppedError(context.turnId, reason, method))
      })
    })
    return Stream.concat(Stream.fromQueue(events), Stream.fromEffectDrain(ended))
  }))
