/**
 * SSE framing: Sluice's `Sse.decode` inside an Effect Stream, next to a plain
 * split-lines-and-JSON.parse loop (the floor for anything that parses every event) and
 * to eventsource-parser and to Effect's own SSE decoder (`effect/encoding/Sse`, after
 * `Stream.decodeText`) inside the same kind of Stream.
 */
import { Sse } from "@sluice/core"
import * as Effect from "effect/Effect"
import * as EffectSse from "effect/encoding/Sse"
import * as Stream from "effect/Stream"
import { createParser, type EventSourceMessage } from "eventsource-parser"
import { measure, reads, report } from "./harness.js"
import * as Transcripts from "./transcripts.js"

/** Split on newlines and JSON.parse every data line: the floor. */
const splitAndParse = (chunks: ReadonlyArray<Uint8Array>): number => {
  const decoder = new TextDecoder()
  let rest = ""
  let events = 0
  const line = (text: string) => {
    if (text.startsWith("data: ")) {
      JSON.parse(text.slice(6))
      events++
    }
  }
  for (const chunk of chunks) {
    const lines = (rest + decoder.decode(chunk, { stream: true })).split("\n")
    rest = lines.pop()!
    for (const text of lines) line(text)
  }
  line(rest + decoder.decode())
  return events
}

/**
 * Runs a stream to its end and counts its elements, the way a consumer that hands each
 * chunk on and forgets it would (`Stream.runForEachArray`: no element is kept alive by
 * the counting).
 */
export const count = <A, E>(stream: Stream.Stream<A, E>): Promise<number> => {
  let n = 0
  return Effect.runPromise(
    Stream.runForEachArray(stream, (chunk) =>
      Effect.sync(() => {
        n += chunk.length
      }))
  ).then(() => n)
}

/** A body as an HTTP client delivers it: one stream chunk per read. */
export const body = (chunks: ReadonlyArray<Uint8Array>): Stream.Stream<Uint8Array> =>
  Stream.fromArrays(...chunks.map((read) => [read]))

const sluice = (chunks: ReadonlyArray<Uint8Array>): Promise<number> => count(body(chunks).pipe(Sse.decode()))

const effectSse = (chunks: ReadonlyArray<Uint8Array>): Promise<number> =>
  count(body(chunks).pipe(Stream.decodeText(), Stream.pipeThroughChannel(EffectSse.decode())))

// eventsource-parser in a Stream; with `maxBufferSize`, the same cap on a buffered
// event as Sluice's framer (`Sse.defaultMaxEventSize`), so both pay for the bound.
const eventsourceParser = (chunks: ReadonlyArray<Uint8Array>, maxBufferSize?: number): Promise<number> =>
  count(Stream.suspend(() => {
    const decoder = new TextDecoder()
    let pending: Array<EventSourceMessage> = []
    const parser = createParser({
      onEvent: (event) => pending.push(event),
      ...(maxBufferSize === undefined ? {} : { maxBufferSize })
    })
    return body(chunks).pipe(
      Stream.map((chunk) => {
        parser.feed(decoder.decode(chunk, { stream: true }))
        const out = pending
        pending = []
        return out
      }),
      Stream.flattenIterable
    )
  }))

/** Runs the framing benchmark and returns its report. */
export const run = async (): Promise<string> => {
  const body = new TextEncoder().encode(Transcripts.anthropic(40_000))
  const sections: Array<string> = []
  for (const size of [16 * 1024, 1024]) {
    const chunks = reads(body, size)
    const floor = await measure("split+JSON.parse", body.length, () => splitAndParse(chunks))
    const ours = await measure("Sluice Sse.decode", body.length, () => sluice(chunks))
    const esp = await measure("eventsource-parser in Stream", body.length, () => eventsourceParser(chunks))
    const espCapped = await measure(
      "eventsource-parser in Stream, maxBufferSize as Sluice's cap",
      body.length,
      () => eventsourceParser(chunks, Sse.defaultMaxEventSize)
    )
    const effect = await measure("effect/encoding Sse.decode in Stream", body.length, () => effectSse(chunks))
    sections.push(
      report(`SSE framing, ${(body.length / 1e6).toFixed(1)} MB transcript, ${size / 1024} KiB reads`, [
        floor,
        ours,
        esp,
        espCapped,
        effect
      ], floor)
    )
  }
  return sections.join("\n")
}
