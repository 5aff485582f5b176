/**
 * The upsert stage as a `Stream` transformer (docs/upserts.md's UpsertStreamProcessor):
 * StreamEvents in, UI payloads (`UIUpsert | UITurnEvent`) out, each upsert carrying
 * its item's complete content so far.
 *
 * - `turn_started` at once on `response_start`.
 * - An item's first content is emitted at once as `created`; `updated` follows each
 *   time its token count reaches the next cumulative gradient threshold (one upsert
 *   however many thresholds a delta crosses), or when its fallback timer fires with
 *   content not yet emitted; `completed` carries the final item on `item_done`.
 * - User messages, tool calls and tool outputs are held and emitted once, `completed`.
 * - `item_error` emits an `error` upsert for the item; `item_cancelled` drops it.
 * - `response_done` flushes and emits `turn_completed`; `response_error` flushes and
 *   emits `turn_error`.
 * - The input ending (or failing, or being interrupted) before `response_done` flushes
 *   what is buffered and ends the turn with `turn_completed` status `aborted` (unless
 *   a `turn_error` already ended it); a failure is then passed on.
 *
 * Each item has its own fallback timer on Effect's `Clock`, reset by every delta; no
 * item's timer delays another's. When the output stream ends or is interrupted, every
 * timer and fiber of the stage is stopped.
 *
 * @since 0.1.0
 */
import type { StreamBMessage, StreamEvent } from "@sluice/core"
import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import type { InvalidUpsertOptions, UnexpectedEvent } from "./UpsertErrors.js"
import type * as UpsertOptions from "./UpsertOptions.js"
import * as UpsertStage from "./UpsertStage.js"

/**
 * How many payloads may wait for the consumer before the stage stops reading input.
 *
 * @since 0.1.0
 * @category constants
 */
export const outputCapacity = 256

/**
 * The stage. Fails with `InvalidUpsertOptions` before reading anything when the
 * options are invalid, and with `UnexpectedEvent` when the events break the turn's
 * sequence (an item event before `response_start`, a delta for an unknown item, ...),
 * after flushing and aborting the turn.
 *
 * @example
 * ```ts
 * import type { StreamEvent } from "@sluice/core"
 * import { UpsertStream } from "@sluice/upserts"
 * import type * as Stream from "effect/Stream"
 *
 * const upserts = (events: Stream.Stream<StreamEvent.StreamEvent>) =>
 *   events.pipe(UpsertStream.upserts({ batchTimeoutMs: 500 }))
 * ```
 *
 * @since 0.1.0
 * @category transformers
 */
export const upserts = (options?: UpsertOptions.UpsertOptionsInput) =>
<E, R>(
  self: Stream.Stream<StreamEvent.StreamEvent, E, R>
): Stream.Stream<StreamBMessage.UIPayload, E | UnexpectedEvent | InvalidUpsertOptions, R> =>
  Stream.unwrap(
    Effect.gen(function*() {
      const output = yield* Queue.make<StreamBMessage.UIPayload, E | UnexpectedEvent | Cause.Done>({
        capacity: outputCapacity
      })
      const stage = yield* UpsertStage.make(options, (payloads) => Queue.offerAll(output, payloads))
      // the input's end (or failure) is the output's, once the turn is flushed and aborted
      yield* Stream.runForEachArray(self, stage.process).pipe(
        Effect.exit,
        Effect.flatMap((exit) => Effect.andThen(stage.end, exit)),
        Queue.into(output),
        Effect.forkScoped
      )
      return Stream.fromQueue(output)
    })
  )
