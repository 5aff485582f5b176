import { describe, expect, it } from "@effect/vitest"
import { yieldToEventLoop } from "@sluice/testing/eventLoop"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as FastCheck from "fast-check"
import { Sse } from "../src/index.js"

const encoder = new TextEncoder()

// after a turn of the event loop: the property tests frame hundreds of bodies
const frame = (reads: ReadonlyArray<Uint8Array>, options?: Sse.DecodeOptions) =>
  Effect.andThen(
    yieldToEventLoop,
    Stream.fromIterable(reads).pipe(Sse.decode(options), Stream.runCollect)
  )

const frameText = (text: string, options?: Sse.DecodeOptions) => frame([encoder.encode(text)], options)

/** Splits bytes at the given cut points (sorted, deduplicated, inside the range). */
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

describe("Sse.decode", () => {
  it.effect("frames data, event and id fields and multi-line data", () =>
    Effect.gen(function*() {
      const events = yield* frameText("event: greet\nid: 7\ndata: hello\ndata: world\n\ndata:{\"a\":1}\n\n")
      expect(events).toStrictEqual([
        { event: "greet", data: "hello\nworld", id: "7", line: 1 },
        { event: "message", data: "{\"a\":1}", id: "7", line: 6 }
      ])
    }))

  it.effect("accepts LF, CR and CRLF line ends alike", () =>
    Effect.gen(function*() {
      const lf = yield* frameText("data: a\n\ndata: b\n\n")
      const cr = yield* frameText("data: a\r\rdata: b\r\r")
      const crlf = yield* frameText("data: a\r\n\r\ndata: b\r\n\r\n")
      expect(cr).toStrictEqual(lf)
      expect(crlf).toStrictEqual(lf)
      expect(lf.map((e) => e.data)).toStrictEqual(["a", "b"])
    }))

  it.effect("skips comments, strips a BOM, ignores unknown fields and reads retry", () =>
    Effect.gen(function*() {
      const events = yield* frameText("\uFEFF: keep-alive\nretry: 3000\nfoo: bar\ndata: x\n\n: ping\n\ndata: y\n\n")
      expect(events).toStrictEqual([
        { event: "message", data: "x", retry: 3000, line: 2 },
        { event: "message", data: "y", line: 8 }
      ])
    }))

  it.effect("strips exactly one space after the colon and allows a field without a colon", () =>
    Effect.gen(function*() {
      const events = yield* frameText("data:  two spaces\n\ndata\n\n")
      expect(events.map((e) => e.data)).toStrictEqual([" two spaces", ""])
    }))

  it.effect("does not dispatch an event without data", () =>
    Effect.gen(function*() {
      const events = yield* frameText("event: lonely\n\nid: 1\n\n")
      expect(events).toStrictEqual([])
    }))

  it.effect("dispatches a final event that lacks its blank line", () =>
    Effect.gen(function*() {
      const events = yield* frameText("data: first\n\ndata: last")
      expect(events.map((e) => e.data)).toStrictEqual(["first", "last"])
    }))

  it.effect("joins a multi-byte character split across reads", () =>
    Effect.gen(function*() {
      const bytes = encoder.encode("data: Olá 👋 ✓\n\n")
      const reads = Array.from(bytes, (b) => Uint8Array.of(b))
      const events = yield* frame(reads)
      expect(events.map((e) => e.data)).toStrictEqual(["Olá 👋 ✓"])
    }))

  it.effect("fails with EventTooLarge naming the line instead of growing without bound", () =>
    Effect.gen(function*() {
      const big = "data: " + "x".repeat(100) + "\n\n"
      const result = yield* Effect.result(frameText("data: ok\n\n" + big, { maxEventSize: 50 }))
      expect(Result.isFailure(result)).toBe(true)
      if (Result.isFailure(result)) {
        expect(result.failure.reason).toBe("EventTooLarge")
        expect(result.failure.line).toBe(3)
        expect(result.failure.message).toMatch(/larger than 50/)
      }
    }))

  it.effect("fails with EventTooLarge on an endless line spread over many reads", () =>
    Effect.gen(function*() {
      const reads = [encoder.encode("data: "), ...Array.from({ length: 100 }, () => encoder.encode("y".repeat(64)))]
      const result = yield* Effect.result(frame(reads, { maxEventSize: 1000 }))
      expect(Result.isFailure(result) && result.failure.reason).toBe("EventTooLarge")
    }))

  it.effect("fails with InvalidUtf8 on bytes that are not UTF-8", () =>
    Effect.gen(function*() {
      const result = yield* Effect.result(
        frame([encoder.encode("data: ok\n\n"), Uint8Array.of(0x64, 0xff, 0xfe, 0x0a)])
      )
      expect(Result.isFailure(result) && result.failure.reason).toBe("InvalidUtf8")
      // the byte itself (0xFF, the second of the second read), not the read's start
      expect(Result.isFailure(result) && result.failure.byteOffset).toBe(11)
      expect(Result.isFailure(result) && result.failure.line).toBe(3)
    }))

  it.effect("strips a BOM only at the start of the body, even when it is split across reads", () =>
    Effect.gen(function*() {
      const bom = encoder.encode("\uFEFF")
      const split = yield* frame([
        bom.subarray(0, 1),
        bom.subarray(1, 2),
        Uint8Array.of(bom[2]!, ...encoder.encode("data: a\n\n"))
      ])
      expect(split.map((e) => e.data)).toStrictEqual(["a"])
      // a U+FEFF that starts a later read is data
      const later = yield* frame([encoder.encode("data: "), encoder.encode("\uFEFFb\n\n")])
      expect(later.map((e) => e.data)).toStrictEqual(["\uFEFFb"])
    }))

  it.effect("a body cut inside a character or a line ends with the event it was in, marked unterminated", () =>
    Effect.gen(function*() {
      const cut = yield* frame([encoder.encode("data: ok\n\ndata: {\"a\": \"x"), Uint8Array.of(0xe2, 0x82)])
      expect(cut).toStrictEqual([
        { event: "message", data: "ok", line: 1 },
        { event: "message", data: "{\"a\": \"x", line: 3, unterminated: true }
      ])
      const noBlankLine = yield* frame([encoder.encode("data: ok\n\ndata: done\n")])
      expect(noBlankLine.map((e) => e.unterminated)).toStrictEqual([undefined, true])
    }))

  it.effect("fails with InvalidUtf8 on a sequence broken across reads", () =>
    Effect.gen(function*() {
      const broken = yield* Effect.result(
        frame([encoder.encode("data: "), Uint8Array.of(0xe2, 0x82), Uint8Array.of(0x41, 0x0a, 0x0a)])
      )
      expect(Result.isFailure(broken) && broken.failure.reason).toBe("InvalidUtf8")
      expect(Result.isFailure(broken) && broken.failure.byteOffset).toBe(6)
    }))

  it.effect("emits the events before a failure", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const result = yield* Stream.fromIterable([encoder.encode("data: a\n\ndata: " + "z".repeat(40) + "\n\n")]).pipe(
        Sse.decode({ maxEventSize: 20 }),
        Stream.runForEach((e) => Effect.sync(() => seen.push(e.data))),
        Effect.result
      )
      expect(Result.isFailure(result)).toBe(true)
      expect(seen).toStrictEqual(["a"])
    }))

  it.effect("passes upstream failures through", () =>
    Effect.gen(function*() {
      const result = yield* Stream.fail("boom" as const).pipe(Sse.decode(), Stream.runCollect, Effect.result)
      expect(result).toStrictEqual(Result.fail("boom"))
    }))

  // Text made of SSE building blocks, including CR/CRLF ends, comments and non-ASCII.
  const sseText = FastCheck.array(
    FastCheck.oneof(
      FastCheck.string({ unit: "grapheme", maxLength: 12 }).map((s) => `data: ${s.replace(/[\r\n]/g, " ")}`),
      FastCheck.constantFrom("event: delta", "id: 42", ": comment", "retry: 10", "data", "data:x:y", "weird"),
      FastCheck.constant("")
    ),
    { maxLength: 30 }
  ).chain((lines) =>
    FastCheck.array(FastCheck.constantFrom("\n", "\r", "\r\n"), { minLength: lines.length, maxLength: lines.length })
      .map(
        (ends) => lines.map((line, i) => line + ends[i]).join("")
      )
  )

  it(
    "every split of the same bytes into reads yields the same events",
    () =>
      FastCheck.assert(
        FastCheck.asyncProperty(sseText, FastCheck.array(FastCheck.nat(), { maxLength: 20 }), (text, cuts) =>
          Effect.runPromise(Effect.gen(function*() {
            const bytes = encoder.encode(text)
            const whole = yield* frame([bytes])
            const split = yield* frame(splitAt(bytes, cuts))
            const byteByByte = yield* frame(Array.from(bytes, (b) =>
              Uint8Array.of(b)))
            expect(split).toStrictEqual(whole)
            expect(byteByByte).toStrictEqual(whole)
          }))),
        { numRuns: 300 }
      ),
    // 300 bodies framed three ways, one Stream chunk per byte: seconds on a busy machine
    120_000
  )

  it(
    "encodeEvent then decode gives the event back",
    () =>
      FastCheck.assert(
        FastCheck.asyncProperty(
          FastCheck.record({
            event: FastCheck.stringMatching(/^[a-z_.]{1,12}$/),
            data: FastCheck.string({ unit: "grapheme", maxLength: 40 }),
            id: FastCheck.stringMatching(/^[0-9a-z-]{1,10}$/)
          }),
          (event) =>
            Effect.runPromise(Effect.gen(function*() {
              const [decoded] = yield* frameText(Sse.encodeEvent(event))
              expect(decoded?.event).toBe(event.event)
              expect(decoded?.id).toBe(event.id)
              expect(decoded?.data).toBe(event.data.replace(/\r\n|\r/g, "\n"))
            }))
        ),
        { numRuns: 100 }
      ),
    60_000
  )
})
