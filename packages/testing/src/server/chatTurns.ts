/**
 * A `TurnStarter` for chat tests: it holds each request to `TurnRequestBody`
 * (`TurnRequest.decode`, as `sluice serve`'s starter does) and runs the turn on the
 * `TurnPipeline` in context from a model stand-in the test drives: a message opened at
 * once, then whatever payloads the test offers, until it ends the turn.
 */
import { StreamEvent } from "@sluice/core"
import { TurnContext, TurnPipeline, TurnRequest, TurnSource } from "@sluice/pipeline"
import { ApiError } from "@sluice/server/ApiError"
import * as TurnStarter from "@sluice/server/TurnStarter"
import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { openingPayloads } from "./slowTurns.js"

/** A started turn as the test sees it: its request, and the model's next payloads. */
export interface DrivenTurn {
  readonly turnId: string
  readonly runId: string
  readonly request: TurnRequest.TurnRequest
  /** Lets the model write more of message `msg-1`. */
  readonly say: (text: string) => Effect.Effect<void>
  /** Ends the message and the turn (`complete`). */
  readonly finish: Effect.Effect<void>
}

/**
 * The starter, and the turns it started, in order (taken by the test).
 */
export const drivenStarter = Effect.gen(function*() {
  const pipeline = yield* TurnPipeline.TurnPipeline
  const started = yield* Queue.unbounded<DrivenTurn>()
  const starter = TurnStarter.TurnStarter.of({
    start: (body) =>
      Effect.gen(function*() {
        const decoded = TurnRequest.decode(body)
        if (decoded._tag === "Failure") {
          return yield* new ApiError({ code: "invalid_request", message: decoded.failure.message })
        }
        const context = yield* Effect.orDie(TurnContext.make())
        const said = yield* Queue.unbounded<StreamEvent.Payload, Cause.Done>()
        let text = ""
        // no limit of turns on this pipeline: never refused
        const running = yield* Effect.orDie(pipeline.start(
          context,
          TurnSource.events((turn) =>
            Stream.concat(Stream.fromIterable(openingPayloads(turn)), Stream.fromQueue(said)).pipe(
              Stream.mapEffect((payload) => StreamEvent.make({ runId: turn.runId }, payload))
            )
          )
        ))
        yield* Queue.offer(started, {
          turnId: context.turnId,
          runId: context.runId,
          request: decoded.success,
          say: (delta) =>
            Effect.asVoid(Queue.offer(said, { type: "item_delta", item_id: "msg-1", delta_content: delta })).pipe(
              Effect.tap(() => Effect.sync(() => (text += delta)))
            ),
          finish: Effect.suspend(() =>
            Queue.offerAll(said, [
              {
                type: "item_done",
                item_id: "msg-1",
                final_item: { type: "message", id: "msg-1", content: text, origin: "agent" }
              },
              {
                type: "response_done",
                response_id: context.runId,
                status: "complete",
                finish_reason: "stop"
              }
            ])
          ).pipe(Effect.andThen(Queue.end(said)), Effect.asVoid)
        })
        return { turnId: context.turnId, events: running.events }
      })
  })
  return { starter, started }
})
