/**
 * What every AI SDK side of the normalization benchmarks shares: a `fetch` that answers
 * with the recorded body, the prompt, and a consumer that reads a `doStream` result
 * to its end.
 */

/** A `fetch` that answers every request with the recorded body, one read per chunk. */
export const recordedFetch = (chunks: ReadonlyArray<Uint8Array>): typeof globalThis.fetch => async () =>
  new Response(
    new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk)
        controller.close()
      }
    }),
    { status: 200, headers: { "content-type": "text/event-stream" } }
  )

/** The one-message prompt every model is called with (the body is recorded anyway). */
export const prompt = [{ role: "user" as const, content: [{ type: "text" as const, text: "bench" }] }]

/** Reads a `doStream` result's stream to its end, counting its parts. */
export const drain = async (stream: ReadableStream<unknown>): Promise<number> => {
  const reader = stream.getReader()
  let parts = 0
  for (;;) {
    const { done } = await reader.read()
    if (done) return parts
    parts++
  }
}
