/**
 * `effect/ai`'s `LanguageModel.streamText` response parts into Sluice StreamEvents,
 * built with core's `TurnBuilder` (as the AI SDK adapter builds its own): text and
 * reasoning parts become message and reasoning items, tool parameter parts and tool
 * calls become function calls (`providerExecuted` kept), tool results become function
 * call outputs (`isFailure` as `success: false`), sources attach to their message,
 * `finish` ends the turn with its reason and usage, an `error` part or a failure of the
 * stream becomes `response_error`. Every turn ends: a stream that stops without
 * `finish` ends `error` with a retryable `stream_truncated` error.
 *
 * @since 0.1.0
 */
import type { StreamEvent, TurnBuilder } from "@sluice/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { type AnyStreamPart, PartConverter } from "./internal/convert.js"

/**
 * The turn the events belong to (ids drawn when left out), the model (the parts'
 * `response-metadata` names it otherwise) and the provider id (`effect-ai` by default).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends TurnBuilder.TurnOptions {
  readonly providerId?: string | undefined
}

/**
 * Turns a stream of response parts (what `LanguageModel.streamText` returns) into the
 * turn's StreamEvents, stamped with Effect's `Clock`. The stream's own failure is part
 * of the turn (`response_error`, then `response_done` with status `error`), so the
 * result does not fail.
 *
 * @since 0.1.0
 * @category transformers
 */
export const fromParts =
  (options: Options = {}) =>
  <E, R>(self: Stream.Stream<AnyStreamPart, E, R>): Stream.Stream<StreamEvent.StreamEvent, never, R> =>
    Stream.suspend(() => {
      const converter = new PartConverter(options)
      const step = (apply: (now: number, out: Array<StreamEvent.StreamEvent>) => void) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          const out: Array<StreamEvent.StreamEvent> = []
          apply(now, out)
          return out
        })
      const parts = self.pipe(
        Stream.mapEffect((part) => step((now, out) => converter.push(part, now, out))),
        Stream.flattenIterable,
        Stream.catch((error) => Stream.fromIterableEffect(step((now, out) => converter.fail(error, now, out))))
      )
      return Stream.concat(parts, Stream.fromIterableEffect(step((now, out) => converter.end(now, out))))
    })
