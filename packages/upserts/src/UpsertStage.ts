/**
 * The upsert stage as effects, for a runner that drives a turn's stages itself (the
 * pipeline's fused turn): the same transitions, batching and fallback timers as
 * `UpsertStream.upserts`, which is built on it. `process` applies a chunk of events
 * and `end` closes the turn as the input's end does (flush, then `turn_completed`
 * status `aborted` unless the turn has ended); the payloads each transition emits go
 * to `deliver`, in order, under the stage's lock. A fallback timer delivers from a
 * fiber of its own, on the `TimerWheel` in context (a wheel of the stage's own without
 * one); every timer stops when the scope closes.
 *
 * @since 0.3.0
 */
import type { StreamBMessage, StreamEvent } from "@sluice/core"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as StageCore from "./internal/stageCore.js"
import type { InvalidUpsertOptions, UnexpectedEvent } from "./UpsertErrors.js"
import * as UpsertOptions from "./UpsertOptions.js"

/**
 * A running stage.
 *
 * @since 0.3.0
 * @category models
 */
export interface UpsertStage<E> {
  /** Applies a chunk of events in order; payloads before a bad event are delivered, then it fails. */
  readonly process: (events: ReadonlyArray<StreamEvent.StreamEvent>) => Effect.Effect<void, E | UnexpectedEvent>
  /** Flushes, and ends an open turn as `aborted`, stopping every timer. */
  readonly end: Effect.Effect<void, E>
}

// Most deltas only grow their item's buffer: those are applied synchronously, and only
// from the first event that emits, arms a timer or is out of order on does the rest of
// the chunk go through a transition.
const quietly = <E>(
  core: StageCore.StageCore<E>,
  all: ReadonlyArray<StreamEvent.StreamEvent>
): Effect.Effect<void, E | UnexpectedEvent> => {
  for (let i = 0; i < all.length; i++) {
    if (!core.processQuiet(all[i]!)) return core.process(i === 0 ? all : all.slice(i))
  }
  return Effect.void
}

/**
 * Starts a stage whose payloads go to `deliver`. Fails with `InvalidUpsertOptions`,
 * naming each bad field, when the options are invalid.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = <E>(
  options: UpsertOptions.UpsertOptionsInput | undefined,
  deliver: (payloads: ReadonlyArray<StreamBMessage.UIPayload>) => Effect.Effect<void, E>
): Effect.Effect<UpsertStage<E>, InvalidUpsertOptions, Scope.Scope> =>
  Effect.gen(function*() {
    const resolved = yield* Effect.fromResult(UpsertOptions.make(options))
    const core = yield* StageCore.make(resolved, deliver)
    return { process: (events) => quietly(core, events), end: core.abort }
  })
