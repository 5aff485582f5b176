/**
 * The behaviour every `RedisStreams` layer shares. The live and the in-memory layer
 * both run it, so the in-memory layer is held to what Redis does.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import * as EntryId from "../../src/EntryId.js"
import { RedisError } from "../../src/RedisError.js"
import { RedisStreams } from "../../src/RedisStreams.js"
import { field, type Fields, type StreamEntry } from "../../src/StreamEntry.js"

const key = (name: string) => `sluice-test:${name}:${randomUUID()}`
const fields = (n: number): Fields => [["n", String(n)], ["payload", JSON.stringify({ n })]]
const numbers = (entries: ReadonlyArray<StreamEntry>) =>
  entries.map((entry) => Number(Option.getOrThrow(field(entry, "n"))))
const reasonOf = <A>(effect: Effect.Effect<A, RedisError>) =>
  Effect.map(Effect.flip(effect), (error) => {
    expect(error).toBeInstanceOf(RedisError)
    return error.reason
  })

export const streamsSuite = (name: string, streams: Layer.Layer<RedisStreams, unknown>) =>
  layer(streams, { timeout: 30_000 })(name, (it) => {
    describe("xadd", () => {
      it.effect("`*` gives growing ids and the entry keeps its fields in order", () =>
        Effect.gen(function*() {
          const redis = yield* RedisStreams
          const k = key("auto")
          const ids: Array<string> = []
          for (let n = 0; n < 5; n++) ids.push(yield* redis.xadd(k, { id: "*", fields: fields(n) }))
          const parsed = ids.map((id) => Option.getOrThrow(EntryId.parse(id)))
          for (let i = 1; i < parsed.length; i++) expect(EntryId.order(parsed[i - 1]!, parsed[i]!)).toBe(-1)
          const entries = yield* redis.xrange(k, "-", "+")
          expect(entries.map((entry) => entry.id)).toStrictEqual(ids)
          expect(entries[2]!.fields).toStrictEqual(fields(2))
        }))

      it.effect("explicit ids must grow: equal, smaller and 0-0 are IdTooSmall, garbage is Rejected", () =>
        Effect.gen(function*() {
          const redis = yield* RedisStreams
          const k = key("explicit")
          expect(yield* reasonOf(redis.xadd(k, { id: "0-0", fields: fields(0) }))).toBe("IdTooSmall")
          expect(yield* redis.xadd(k, { id: "5-1", fields: fields(1) })).toBe("5-1")
          expect(yield* reasonOf(redis.xadd(k, { id: "5-1", fields: fields(2) }))).toBe("IdTooSmall")
          expect(yield* reasonOf(redis.xadd(k, { id: "5-0", fields: fields(2) }))).toBe("IdTooSmall")
          expect(yield* reasonOf(redis.xadd(k, { id: "4-9", fields: fields(2) }))).toBe("IdTooSmall")
          expect(yield* reasonOf(redis.xadd(k, { id: "not-an-id", fields: fields(2) }))).toBe("Rejected")
          expect(yield* redis.xadd(k, { id: "5-*", fields: fields(2) })).toBe("5-2")
          expect(yield* redis.xadd(k, { id: "7-*", fields: fields(3) })).toBe("7-0")
          expect(yield* redis.xadd(k, { id: "8", fields: fields(4) })).toBe("8-0")
          expect(yield* reasonOf(redis.xadd(k, { id: "6-*", fields: fields(5) }))).toBe("IdTooSmall")
          expect(numbers(yield* redis.xrange(k, "-", "+"))).toStrictEqual([1, 2, 3, 4])
        }))

      it.effect("the failed XADD of a repeated id leaves the first entry as it was", () =>
        Effect.gen(function*() {
          const redis = yield* RedisStreams
          const k = key("repeat")
          yield* redis.xadd(k, { id: "0-1", fields: [["v", "first"]] })
          const error = yield* Effect.flip(redis.xadd(k, { id: "0-1", fields: [["v", "second"]] }))
          expect(error.reason).toBe("IdTooSmall")
          expect(error.command).toBe("XADD")
          expect(error.key).toBe(k)
          expect(yield* redis.xrange(k, "0-1", "0-1")).toStrictEqual([{ id: "0-1", fields: [["v", "first"]] }])
        }))

      it.effect("a key of another type is Rejected", () =>
        Effect.gen(function*() {
          const redis = yield* RedisStreams
          const k = key("wrongtype")
          yield* redis.zadd(k, 1, "member")
          expect(yield* reasonOf(redis.xadd(k, { id: "*", fields: fields(0) }))).toBe("Rejected")
          expect(yield* reasonOf(redis.xrange(k, "-", "+"))).toBe("Rejected")
          expect(yield* reasonOf(redis.xlen(k))).toBe("Rejected")
        }))

      it.effect("MAXLEN ~ n keeps at least the newest n entries and trims the oldest", () =>
        Effect.gen(function*() {
          const redis = yield* RedisStreams
          const k = key("maxlen")
          for (let n = 1; n <= 400; n++) yield* redis.xadd(k, { id: `0-${n}`, fields: fields(n) }, { maxLen: 10 })
          const length = yield* redis.xlen(k)
          expect(length).toBeGreaterThanOrEqual(10)
          expect(length).toBeLessThan(400)
          const entries = yield* redis.xrange(k, "-", "+")
          expect(numbers(entries)).toStrictEqual(Array.from({ length }, (_, i) => 400 - length + 1 + i))
          // Trimming never lowers the top id: an old id stays too small.
          expect(yield* reasonOf(redis.xadd(k, { id: "0-1", fields: fields(0) }))).toBe("IdTooSmall")
        }))
    })

    describe("xaddAll", () => {
      it.effect("appends in order in one pipeline, each entry succeeding or failing alone", () =>
        Effect.gen(function*() {
          const redis = yield* RedisStreams
          const k = key("batch")
          const results = yield* redis.xaddAll(k, [
            { id: "0-1", fields: fields(1) },
            { id: "0-2", fields: fields(2) },
            { id: "0-2", fields: fields(3) },
            { id: "0-3", fields: fields(4) }
          ])
          expect(results.map(Result.map((id) => id))).toStrictEqual([
            Result.succeed("0-1"),
            Result.succeed("0-2"),
            expect.anything(),
            Result.succeed("0-3")
          ])
          const failed = results[2]!
          expect(Result.isFailure(failed) && failed.failure.reason).toBe("IdTooSmall")
          expect(numbers(yield* redis.xrange(k, "-", "+"))).toStrictEqual([1, 2, 4])
          expect(yield* redis.xaddAll(k, [])).toStrictEqual([])
        }))
    })

    describe("xaddAfter", () => {
      it.effect("appends every entry when the stream's last entry is the one named, nothing otherwise", () =>
        Effect.gen(function*() {
          const redis = yield* RedisStreams
          const k = key("after")
          // a missing stream has no last entry
          expect(yield* redis.xaddAfter(k, "0-0", [{ id: "0-1", fields: fields(1) }])).toBe(false)
          expect(yield* redis.xlen(k)).toBe(0)
          yield* redis.xadd(k, { id: "0-1", fields: fields(1) })
          yield* redis.xadd(k, { id: "0-2", fields: fields(2) })
          // another entry is last: nothing is written
          expect(
            yield* redis.xaddAfter(k, "0-1", [{ id: "0-3", fields: fields(3) }, { id: "0-4", fields: fields(4) }])
          ).toBe(false)
          expect(numbers(yield* redis.xrange(k, "-", "+"))).toStrictEqual([1, 2])
          expect(
            yield* redis.xaddAfter(k, "0-2", [{ id: "0-3", fields: fields(3) }, { id: "0-4", fields: fields(4) }])
          ).toBe(true)
          expect((yield* redis.xrange(k, "-", "+")).map((entry) => entry.id)).toStrictEqual([
            "0-1",
            "0-2",
            "0-3",
            "0-4"
          ])
          expect(numbers(yield* redis.xrange(k, "-", "+"))).toStrictEqual([1, 2, 3, 4])
          // the last entry, not the top id: after a delete the entry before it is last
          yield* redis.xdel(k, ["0-4"])
          expect(yield* redis.xaddAfter(k, "0-3", [{ id: "0-5", fields: fields(5) }])).toBe(true)
          expect(numbers(yield* redis.xrange(k, "-", "+"))).toStrictEqual([1, 2, 3, 5])
        }))

      it.effect("two writers racing to append after the same entry: exactly one wins, whole", () =>
        Effect.gen(function*() {
          const redis = yield* RedisStreams
          const k = key("race")
          yield* redis.xadd(k, { id: "0-1", fields: fields(1) })
          const ending = (n: number) => [{ id: "0-2", fields: fields(n) }, { id: "0-3", fields: fields(n + 1) }]
          const won = yield* Effect.all(
            [redis.xaddAfter(k, "0-1", ending(10)), redis.xaddAfter(k, "0-1", ending(20))],
            {
              concurrency: "unbounded"
            }
          )
          expect(won.filter((w) => w).length).toBe(1)
          const written = numbers(yield* redis.xrange(k, "-", "+"))
          expect([[1, 10, 11], [1, 20, 21]]).toContainEqual(written)
        }))
    })

    describe("xrange", () => {
      it.effect("reads inclusive, exclusive and millisecond bounds with a count", () =>
        Effect.gen(function*() {
          const redis = yield* RedisStreams
          const k = key("range")
          for (let n = 1; n <= 6; n++) yield* redis.xadd(k, { id: `${Math.ceil(n / 2)}-${n}`, fields: fields(n) })
          expect(numbers(yield* redis.xrange(k, "-", "+"))).toStrictEqual([1, 2, 3, 4, 5, 6])
          expect(numbers(yield* redis.xrange(k, "-", "+", 2))).toStrictEqual([1, 2])
          expect(numbers(yield* redis.xrange(k, "(1-2", "+"))).toStrictEqual([3, 4, 5, 6])
          expect(numbers(yield* redis.xrange(k, "2", "2"))).toStrictEqual([3, 4])
          expect(numbers(yield* redis.xrange(k, "2-4", "(3-6"))).toStrictEqual([4, 5])
          expect(numbers(yield* redis.xrange(k, "3-6", "1-1"))).toStrictEqual([])
          expect(yield* redis.xrange(key("missing"), "-", "+")).toStrictEqual([])
          expect(yield* redis.xlen(key("missing"))).toBe(0)
          expect(yield* reasonOf(redis.xrange(k, "garbage", "+"))).toBe("Rejected")
        }))
    })

    describe("xlast, setPx and get", () => {
      it.effect("xlast is the newest entry, none for a missing key; get reads what setPx wrote", () =>
        Effect.gen(function*() {
          const redis = yield* RedisStreams
          const k = key("last")
          expect(Option.isNone(yield* redis.xlast(k))).toBe(true)
          for (let n = 1; n <= 3; n++) yield* redis.xadd(k, { id: `0-${n}`, fields: fields(n) })
          expect(yield* redis.xlast(k)).toStrictEqual(Option.some({ id: "0-3", fields: fields(3) }))
          const s = key("string")
          expect(Option.isNone(yield* redis.get(s))).toBe(true)
          yield* redis.setPx(s, "one", 60_000)
          yield* redis.setPx(s, "two", 60_000)
          expect(yield* redis.get(s)).toStrictEqual(Option.some("two"))
          const ttl = yield* redis.pttl(s)
          expect(ttl > 0 && ttl <= 60_000).toBe(true)
          expect((yield* Effect.flip(redis.get(k))).reason).toBe("Rejected")
          expect((yield* Effect.flip(redis.xlast(s))).reason).toBe("Rejected")
        }))
    })

    describe("tail", () => {
      it.effect("reads what is there, then follows appends until told to stop", () =>
        Effect.gen(function*() {
          const redis = yield* RedisStreams
          const k = key("tail")
          for (let n = 1; n <= 3; n++) yield* redis.xadd(k, { id: `0-${n}`, fields: fields(n) })
          const follower = yield* redis.tail(k, { until: (entry) => Option.contains(field(entry, "n"), "8"), count: 2 })
            .pipe(
              Stream.runCollect,
              Effect.forkChild
            )
          for (let n = 4; n <= 8; n++) {
            yield* Effect.yieldNow
            yield* redis.xadd(k, { id: `0-${n}`, fields: fields(n) })
          }
          yield* redis.xadd(k, { id: "0-9", fields: fields(9) })
          const seen = yield* Fiber.join(follower)
          expect(numbers(seen)).toStrictEqual([1, 2, 3, 4, 5, 6, 7, 8])
          expect(seen.map((entry) => entry.id)).toStrictEqual(
            [1, 2, 3, 4, 5, 6, 7, 8].map((n) => `0-${n}`)
          )
        }))

      it.effect("resumes after an entry id and can be cut short", () =>
        Effect.gen(function*() {
          const redis = yield* RedisStreams
          const k = key("resume")
          for (let n = 1; n <= 5; n++) yield* redis.xadd(k, { id: `0-${n}`, fields: fields(n) })
          const seen = yield* redis.tail(k, { after: "0-3" }).pipe(Stream.take(2), Stream.runCollect)
          expect(numbers(seen)).toStrictEqual([4, 5])
          const whole = yield* redis.tail(k, { after: "0" }).pipe(Stream.take(5), Stream.runCollect)
          expect(numbers(whole)).toStrictEqual([1, 2, 3, 4, 5])
        }))

      it.effect("waits for a key that does not exist yet", () =>
        Effect.gen(function*() {
          const redis = yield* RedisStreams
          const k = key("later")
          const follower = yield* redis.tail(k).pipe(Stream.take(1), Stream.runCollect, Effect.forkChild)
          yield* Effect.yieldNow
          yield* redis.xadd(k, { id: "0-1", fields: fields(1) })
          expect(numbers(yield* Fiber.join(follower))).toStrictEqual([1])
        }))

      it.effect("a malformed start id fails with Rejected", () =>
        Effect.gen(function*() {
          const redis = yield* RedisStreams
          const error = yield* Effect.flip(Stream.runCollect(redis.tail(key("bad"), { after: "nope" })))
          expect(error.reason).toBe("Rejected")
        }))
    })

    describe("xdel", () => {
      it.effect("deletes the entries named; a deleted id stays below the top, a read after it resumes past it", () =>
        Effect.gen(function*() {
          const redis = yield* RedisStreams
          const k = key("xdel")
          for (let n = 1; n <= 5; n++) yield* redis.xadd(k, { id: `0-${n}`, fields: fields(n) })
          expect(yield* redis.xdel(k, ["0-2", "0-4", "0-9"])).toBe(2)
          expect(yield* redis.xdel(k, ["0-2"])).toBe(0)
          expect(yield* redis.xdel(k, [])).toBe(0)
          expect(yield* redis.xdel(key("none"), ["0-1"])).toBe(0)
          expect(yield* redis.xlen(k)).toBe(3)
          expect(numbers(yield* redis.xrange(k, "-", "+"))).toStrictEqual([1, 3, 5])
          // never written again: the id is below the stream's top
          expect(yield* reasonOf(redis.xadd(k, { id: "0-4", fields: fields(4) }))).toBe("IdTooSmall")
          // a reader that saw a deleted id goes on with the entries after it
          expect(numbers(yield* redis.xrange(k, "(0-2", "+"))).toStrictEqual([3, 5])
          const tailed = yield* redis.tail(k, { after: "0-4", until: (entry) => entry.id === "0-5" }).pipe(
            Stream.runCollect
          )
          expect(numbers(tailed)).toStrictEqual([5])
          expect(yield* reasonOf(redis.xdel(k, ["nope"]))).toBe("Rejected")
        }))
    })

    describe("tail reads bounded by bytes", () => {
      it.effect("a read of large entries takes as many as the byte budget holds, every entry once, in order", () =>
        Effect.gen(function*() {
          const redis = yield* RedisStreams
          const k = key("budget")
          const big = "x".repeat(10_000)
          for (let n = 1; n <= 40; n++) {
            yield* redis.xadd(k, { id: `0-${n}`, fields: [["n", String(n)], ["payload", big]] })
          }
          const chunks = yield* redis.tail(k, { maxBytes: 25_000, until: (entry) => entry.id === "0-40" }).pipe(
            Stream.chunks,
            Stream.runCollect
          )
          const sizes = chunks.map((chunk) => chunk.length)
          // the first read is small (entry sizes unknown), then two 10 KB entries a read
          expect(sizes[0]).toBeLessThanOrEqual(16)
          expect(Math.max(...sizes.slice(1))).toBeLessThanOrEqual(2)
          expect(numbers(chunks.flat())).toStrictEqual(
            Array.from({ length: 40 }, (_, i) => i + 1)
          )
        }))
    })

    describe("expiry", () => {
      it.effect("PEXPIRE sets a time to live that PTTL reports; zero deletes", () =>
        Effect.gen(function*() {
          const redis = yield* RedisStreams
          const k = key("ttl")
          expect(yield* redis.pexpire(k, 1000)).toBe(false)
          expect(yield* redis.pttl(k)).toBe(-2)
          yield* redis.xadd(k, { id: "*", fields: fields(1) })
          expect(yield* redis.pttl(k)).toBe(-1)
          expect(yield* redis.pexpire(k, 60_000)).toBe(true)
          const ttl = yield* redis.pttl(k)
          expect(ttl).toBeGreaterThan(0)
          expect(ttl).toBeLessThanOrEqual(60_000)
          expect(yield* redis.pexpire(k, 0)).toBe(true)
          expect(yield* redis.pttl(k)).toBe(-2)
          expect(yield* redis.xlen(k)).toBe(0)
        }))
    })

    describe("sorted sets", () => {
      it.effect("add, read by score in either direction with a limit, remove by score", () =>
        Effect.gen(function*() {
          const redis = yield* RedisStreams
          const k = key("zset")
          expect(yield* redis.zadd(k, 30, "c")).toBe(true)
          expect(yield* redis.zadd(k, 10, "a")).toBe(true)
          expect(yield* redis.zadd(k, 20, "b")).toBe(true)
          expect(yield* redis.zadd(k, 99, "a", { onlyNew: true })).toBe(false)
          expect(yield* redis.zadd(k, 25, "b")).toBe(false)
          const all = yield* redis.zrangeByScore(k, -Infinity, Infinity)
          expect(all).toStrictEqual([{ member: "a", score: 10 }, { member: "b", score: 25 }, {
            member: "c",
            score: 30
          }])
          expect((yield* redis.zrangeByScore(k, 0, 100, { reverse: true, count: 2 })).map((m) => m.member))
            .toStrictEqual(["c", "b"])
          expect((yield* redis.zrangeByScore(k, 0, 100, { offset: 1, count: 1 })).map((m) => m.member)).toStrictEqual([
            "b"
          ])
          expect((yield* redis.zrangeByScore(k, 20, 26)).map((m) => m.member)).toStrictEqual(["b"])
          expect(yield* redis.zremRangeByScore(k, -Infinity, 25)).toBe(2)
          expect((yield* redis.zrangeByScore(k, -Infinity, Infinity)).map((m) => m.member)).toStrictEqual(["c"])
          expect(yield* redis.zrangeByScore(key("none"), -Infinity, Infinity)).toStrictEqual([])
          const stream = key("stream")
          yield* redis.xadd(stream, { id: "*", fields: fields(1) })
          expect(yield* reasonOf(redis.zadd(stream, 1, "x"))).toBe("Rejected")
        }))
    })
  })
