/**
 * One long message as a provider streams it: a turn of a single agent message, in
 * deltas of 1 to 64 characters (about 32 on average, 8 tokens), made lazily so that
 * the events of a 4 MB message are never all held at once. Used by the storage tests
 * and `pnpm bench storage`.
 */
import { type StreamEvent, TurnBuilder } from "@sluice/core"
import * as Stream from "effect/Stream"

const alphabet = "lorem ipsum dolor sit amet, consectetur adipiscing elit; sed do eiusmod tempor. "

/**
 * A message text of `bytes` ASCII characters.
 *
 * @since 0.3.0
 */
export const messageText = (bytes: number): string =>
  alphabet.repeat(Math.ceil(bytes / alphabet.length)).slice(0, bytes)

function* events(turnId: string, text: string): Generator<StreamEvent.StreamEvent> {
  const builder = TurnBuilder.make({ providerId: "bench", options: { turnId }, now: Date.now })
  const out: Array<StreamEvent.StreamEvent> = []
  builder.start(out, "bench")
  const key = builder.openItem(out, "message")
  yield* out.splice(0)
  let at = 0
  for (let step = 0; at < text.length; step++) {
    const size = 1 + ((step * 37) % 64)
    builder.delta(out, key, text.slice(at, at + size))
    at += size
    yield* out.splice(0)
  }
  builder.done(out, key, { type: "message", id: builder.item(key)!.id, content: text, origin: "agent" })
  builder.finish(out, { finishReason: "stop" })
  yield* out.splice(0)
}

/**
 * The turn's events, in chunks of 256.
 *
 * @since 0.3.0
 */
export const messageTurn = (turnId: string, text: string): Stream.Stream<StreamEvent.StreamEvent> =>
  Stream.suspend(() => Stream.fromIteratorSucceed(events(turnId, text), 256))
