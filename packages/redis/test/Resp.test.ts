import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "fast-check"
import { ErrorReply, ProtocolError, type Reply, ReplyReader, RespWriter } from "../src/internal/resp.js"

// How Redis would send a reply (RESP2), written independently of the reader.
const encodeReply = (reply: Reply): string => {
  if (reply === null) return "$-1\r\n"
  if (typeof reply === "number") return `:${reply}\r\n`
  if (typeof reply === "string") return `$${Buffer.byteLength(reply)}\r\n${reply}\r\n`
  if (reply instanceof ErrorReply) return `-${reply.message}\r\n`
  return `*${reply.length}\r\n${reply.map(encodeReply).join("")}`
}

const fullUnicodeString = () => FastCheck.string({ unit: "binary" })

const lineText = fullUnicodeString().filter((text) => !text.includes("\r") && !text.includes("\n"))
const replyArb: FastCheck.Arbitrary<Reply> = FastCheck.letrec<{ reply: Reply }>((tie) => ({
  reply: FastCheck.oneof(
    { depthSize: "small", withCrossShrink: true },
    fullUnicodeString(),
    FastCheck.integer(),
    FastCheck.constant(null),
    lineText.map((text) => new ErrorReply(text)),
    FastCheck.array(tie("reply"), { maxLength: 4 })
  )
})).reply

// Feeds `bytes` to a reader in pieces cut at `cuts` and collects the replies.
const readAll = (bytes: Buffer, cuts: ReadonlyArray<number> = []): Array<Reply> => {
  const reader = new ReplyReader()
  const replies: Array<Reply> = []
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b)
  let from = 0
  for (const point of [...points, bytes.length]) {
    reader.feed(bytes.subarray(from, point), (reply) => replies.push(reply))
    from = point
  }
  return replies
}

describe("RESP", () => {
  describe("ReplyReader", () => {
    it.effect(
      "reads every reply, in order, however the bytes are split",
      () =>
        Effect.sync(() =>
          FastCheck.assert(
            FastCheck.property(
              FastCheck.array(replyArb, { maxLength: 8 }),
              FastCheck.array(FastCheck.nat(), { maxLength: 12 }),
              (replies, cuts) => {
                const bytes = Buffer.from(replies.map(encodeReply).join(""))
                expect(readAll(bytes, cuts)).toStrictEqual(replies)
              }
            ),
            { numRuns: 100 }
          )
        ),
      60_000
    )

    it.effect("reads simple strings, negative integers, null arrays and the replies Redis gives XADD", () =>
      Effect.sync(() => {
        const bytes = Buffer.from(
          "+OK\r\n:-12\r\n*-1\r\n$5\r\n0-123\r\n" +
            "-ERR The ID specified in XADD is equal or smaller than the target stream top item\r\n"
        )
        expect(readAll(bytes)).toStrictEqual([
          "OK",
          -12,
          null,
          "0-123",
          new ErrorReply("ERR The ID specified in XADD is equal or smaller than the target stream top item")
        ])
      }))

    it.effect("waits for the rest of a reply cut anywhere, one byte at a time", () =>
      Effect.sync(() => {
        const bytes = Buffer.from("*2\r\n$3\r\nabc\r\n:7\r\n")
        expect(readAll(bytes, Array.from({ length: bytes.length }, (_, i) => i))).toStrictEqual([["abc", 7]])
      }))

    it.effect("refuses bytes that are not RESP2, naming what was wrong", () =>
      Effect.sync(() => {
        const cases: ReadonlyArray<readonly [string, RegExp]> = [
          ["?what\r\n", /unknown reply type "\?"/],
          [":12a\r\n", /malformed number: 12a/],
          ["$\r\n", /empty number/],
          ["$2\r\nabcd\r\n", /bulk string longer than its length/],
          ["+OK\rX", /not ended by CRLF/]
        ]
        for (const [text, message] of cases) {
          expect(() => readAll(Buffer.from(text))).toThrow(ProtocolError)
          expect(() => readAll(Buffer.from(text))).toThrow(message)
        }
      }))
  })

  describe("RespWriter", () => {
    // What a writer holds once `write` ran, taken.
    const written = (write: (out: RespWriter) => void, slabSize?: number): Buffer => {
      const out = new RespWriter(slabSize)
      write(out)
      return out.take()
    }

    it.effect("a command is an array of bulk strings with byte lengths", () =>
      Effect.sync(() => {
        expect(written((out) => out.command(["SET", "k", "é"])).toString()).toBe(
          "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\né\r\n"
        )
      }))

    it.effect("texts whose byte length has more digits than their length, and a text counted first", () =>
      Effect.sync(() => {
        // 5 characters, 10 bytes; 40 characters, 120 bytes; past 64 Ki characters
        const texts = ["éééé", "ééééé", "€".repeat(40), "x".repeat(9), "😀".repeat(3), "é€😀".repeat(30_000)]
        for (const slabSize of [1, 64 * 1024]) {
          const bytes = written((out) => out.command(texts), slabSize)
          expect(bytes.toString()).toBe(
            `*${texts.length}\r\n${texts.map((text) => `$${Buffer.byteLength(text)}\r\n${text}\r\n`).join("")}`
          )
        }
      }))

    const entryArb = FastCheck.record({
      id: FastCheck.string(),
      fields: FastCheck.array(FastCheck.tuple(fullUnicodeString(), fullUnicodeString()))
    })

    it.effect(
      "XADD pipelines read back as the commands they encode, whatever the slab size, and taken bytes stay as they were",
      () =>
        Effect.sync(() =>
          FastCheck.assert(
            FastCheck.property(
              fullUnicodeString(),
              FastCheck.option(FastCheck.nat(), { nil: undefined }),
              FastCheck.array(FastCheck.array(entryArb, { maxLength: 4 }), { minLength: 1, maxLength: 4 }),
              FastCheck.integer({ min: 1, max: 256 }),
              (key, maxLen, pipelines, slabSize) => {
                const out = new RespWriter(slabSize)
                const taken = pipelines.map((entries) => {
                  out.xadds(key, entries, maxLen)
                  const bytes = out.take()
                  return { bytes, copy: Buffer.from(bytes), entries }
                })
                for (const { bytes, copy, entries } of taken) {
                  expect(bytes.equals(copy)).toBe(true)
                  const expected = entries.map((entry) => [
                    "XADD",
                    key,
                    ...(maxLen === undefined ? [] : ["MAXLEN", "~", String(maxLen)]),
                    entry.id,
                    ...entry.fields.flat()
                  ])
                  expect(readAll(bytes)).toStrictEqual(expected)
                }
              }
            ),
            { numRuns: 100 }
          )
        ),
      60_000
    )

    it.effect(
      "undo forgets a pipeline written in part, also across a new slab",
      () =>
        Effect.sync(() =>
          FastCheck.assert(
            FastCheck.property(
              FastCheck.array(fullUnicodeString(), { minLength: 1, maxLength: 4 }),
              FastCheck.array(fullUnicodeString(), { minLength: 1, maxLength: 4 }),
              FastCheck.integer({ min: 1, max: 64 }),
              (first, broken, slabSize) => {
                const out = new RespWriter(slabSize)
                out.command(first)
                const mark = out.mark()
                out.command(broken)
                out.undo(mark)
                out.command(["PING"])
                expect(readAll(out.take())).toStrictEqual([first, ["PING"]])
              }
            ),
            { numRuns: 100 }
          )
        ),
      60_000
    )
  })
})
