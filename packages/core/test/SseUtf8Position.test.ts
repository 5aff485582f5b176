/**
 * A rough edge: bytes that are not UTF-8 are reported at the byte (and line)
 * where they are, not at the start of the read they came in, whichever reads the body
 * is split into; the events before that byte are framed first.
 */
import { describe, expect, it } from "@effect/vitest"
import { checkEffect } from "@sluice/testing/property"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as FastCheck from "fast-check"
import { Sse } from "../src/index.js"

const encoder = new TextEncoder()

/** The events framed before the failure, and the failure. */
const frame = (reads: ReadonlyArray<Uint8Array>) =>
  Effect.gen(function*() {
    const events: Array<Sse.SseEvent> = []
    const error = yield* Stream.fromIterable(reads).pipe(
      Sse.decode(),
      Stream.runForEach((event) => Effect.sync(() => void events.push(event))),
      Effect.flip
    )
    return { events, error }
  })

const concat = (...parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const bytes = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0))
  let at = 0
  for (const part of parts) {
    bytes.set(part, at)
    at += part.length
  }
  return bytes
}

/** Splits bytes at the given cut points (taken modulo the length, sorted, deduplicated). */
const splitAt = (bytes: Uint8Array, cuts: ReadonlyArray<number>): Array<Uint8Array> => {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)
  const reads: Array<Uint8Array> = []
  let from = 0
  for (const point of points) {
    reads.push(bytes.subarray(from, point))
    from = point
  }
  reads.push(bytes.subarray(from))
  return reads
}

// sequences invalid at their first byte, whatever follows them: a byte no sequence
// starts with, a stray continuation byte, an overlong lead, a lead whose next byte is
// not a continuation, an encoded surrogate, a code point past U+10FFFF
const invalidSequences: ReadonlyArray<ReadonlyArray<number>> = [
  [0xff],
  [0x80],
  [0xc0, 0x80],
  [0xe2, 0x28, 0xa1],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80]
]

const lines = FastCheck.array(
  FastCheck.oneof(
    FastCheck.string({ unit: "grapheme", maxLength: 10 }).map((s) => `data: ${s.replace(/[\r\n]/g, " ")}`),
    FastCheck.constantFrom("event: delta", ": comment", "id: 7", "")
  ),
  { maxLength: 12 }
).chain((fields) =>
  FastCheck.array(FastCheck.constantFrom("\n", "\r", "\r\n"), {
    minLength: fields.length,
    maxLength: fields.length
  }).map((ends) => fields.map((field, i) => field + ends[i]))
)

const lineEnds = (text: string): number => text.match(/\r\n|\r|\n/g)?.length ?? 0

describe("Sse.decode: where the body stops being UTF-8", () => {
  it.effect("names the byte and its line, not the start of the read", () =>
    Effect.gen(function*() {
      // one read: "data: ok\n\n" then "data: x" then 0xFF, on line 3 at byte 17
      const body = concat(encoder.encode("data: ok\n\ndata: x"), Uint8Array.of(0xff), encoder.encode("\n\n"))
      const { error, events } = yield* frame([body])
      expect(error).toMatchObject({ _tag: "SseError", reason: "InvalidUtf8", byteOffset: 17, line: 3 })
      expect(error.message).toBe("SSE body is not valid UTF-8 at byte 17 (line 3)")
      expect(events.map((event) => event.data)).toStrictEqual(["ok"])
      // two reads: the bad byte is the second of the second read (the old test's body)
      const second = yield* frame([encoder.encode("data: ok\n\n"), Uint8Array.of(0x64, 0xff, 0xfe, 0x0a)])
      expect(second.error).toMatchObject({ reason: "InvalidUtf8", byteOffset: 11, line: 3 })
    }))

  it.effect("a byte no character starts with at the very end of the body is invalid, not a cut character", () =>
    Effect.gen(function*() {
      const { error } = yield* frame([encoder.encode("data: ok\n\ndata: x"), Uint8Array.of(0xff)])
      expect(error).toMatchObject({ reason: "InvalidUtf8", byteOffset: 17, line: 3 })
      // a character really cut short by the end is still a truncated body, not an error
      const cut = yield* Stream.make(concat(encoder.encode("data: x"), Uint8Array.of(0xe2, 0x82))).pipe(
        Sse.decode(),
        Stream.runCollect
      )
      expect(cut).toStrictEqual([{ event: "message", data: "x", line: 1, unterminated: true }])
    }))

  it.effect(
    "for any split of the body into reads: the same byte, the same line, the same events before it",
    () =>
      checkEffect(
        FastCheck.record({
          before: lines,
          partial: FastCheck.string({ unit: "grapheme", maxLength: 6 }).map((s) => s.replace(/[\r\n]/g, " ")),
          invalid: FastCheck.constantFrom(...invalidSequences),
          after: lines,
          cuts: FastCheck.array(FastCheck.nat(), { maxLength: 12 })
        }),
        ({ after, before, cuts, invalid, partial }) =>
          Effect.gen(function*() {
            const prefix = before.join("") + partial
            const head = encoder.encode(prefix)
            const body = concat(head, Uint8Array.from(invalid), encoder.encode(after.join("")))
            // the events a body of the text before the bad byte frames, whole
            const expected = (yield* Sse.decodeText(prefix)).filter((event) => event.unterminated !== true)
            for (const reads of [[body], splitAt(body, cuts), Array.from(body, (b) => Uint8Array.of(b))]) {
              const { error, events } = yield* frame(reads)
              expect(error).toMatchObject({
                reason: "InvalidUtf8",
                byteOffset: head.length,
                line: lineEnds(prefix) + 1
              })
              expect(events).toStrictEqual(expected)
            }
          }),
        { numRuns: 200 }
      ),
    // 200 bodies framed three ways, one read per byte among them
    120_000
  )
})
