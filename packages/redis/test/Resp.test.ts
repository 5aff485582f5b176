import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "fast-check"
import { command, ErrorReply, ProtocolError, type Reply, ReplyReader, xadds } from "../src/internal/resp.js"

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

  describe("encoding", () => {
    it.effect("a command is an array of bulk strings with byte lengths", () =>
      Effect.sync(() => {
        expect(command(["SET", "k", "é"])).toBe("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\né\r\n")
      }))

    it.effect(
      "XADD pipelines read back as the commands they encode",
      () =>
        Effect.sync(() =>
          FastCheck.assert(
            FastCheck.property(
              fullUnicodeString(),
              FastCheck.option(FastCheck.nat(), { nil: undefined }),
              FastCheck.array(
                FastCheck.record({
                  id: FastCheck.string(),
                  fields: FastCheck.array(FastCheck.tuple(fullUnicodeString(), fullUnicodeString()))
                }),
                { maxLength: 6 }
              ),
              (key, maxLen, entries) => {
                const expected = entries.map((entry) => [
                  "XADD",
                  key,
                  ...(maxLen === undefined ? [] : ["MAXLEN", "~", String(maxLen)]),
                  entry.id,
                  ...entry.fields.flat()
                ])
                expect(readAll(Buffer.from(xadds(key, entries, maxLen)))).toStrictEqual(expected)
              }
            ),
            { numRuns: 100 }
          )
        ),
      60_000
    )
  })
})
