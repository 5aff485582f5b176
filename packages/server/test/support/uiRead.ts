/**
 * The AI SDK's own reading of a UI message stream body, as `useChat` reads it
 * (`parseJsonEventStream` with `uiMessageChunkSchema`, then `readUIMessageStream`): the
 * last state of the message, and the errors the reader reported.
 */
import {
  parseJsonEventStream,
  readUIMessageStream,
  type UIMessage,
  type UIMessageChunk,
  uiMessageChunkSchema
} from "ai"
import * as Effect from "effect/Effect"

/** What the reader made of a body. */
export interface Read {
  readonly message: UIMessage | undefined
  readonly errors: ReadonlyArray<string>
}

/** Reads a UI message stream response to its end. */
export const readMessage = (response: Response): Effect.Effect<Read> =>
  Effect.promise(async () => {
    const body = response.body
    if (body === null) throw new Error("no body")
    const chunks = parseJsonEventStream({ stream: body, schema: uiMessageChunkSchema }).pipeThrough(
      new TransformStream<{ success: boolean; value?: UIMessageChunk; error?: unknown }, UIMessageChunk>({
        transform(part, controller) {
          if (!part.success || part.value === undefined) throw part.error
          controller.enqueue(part.value)
        }
      })
    )
    const errors: Array<string> = []
    let message: UIMessage | undefined
    for await (const next of readUIMessageStream({ stream: chunks, onError: (error) => errors.push(String(error)) })) {
      message = next
    }
    return { message, errors }
  })
