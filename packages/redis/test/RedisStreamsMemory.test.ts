import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/testing/TestClock"
import { RedisStreams } from "../src/RedisStreams.js"
import * as RedisStreamsMemory from "../src/RedisStreamsMemory.js"
import { streamsSuite } from "./support/streamsSuite.js"

streamsSuite("RedisStreamsMemory", RedisStreamsMemory.layer)

describe("RedisStreamsMemory on Effect's Clock", () => {
  it.effect("`*` ids come from the clock: <now>-0, then the sequence within one millisecond", () =>
    Effect.gen(function*() {
      const redis = yield* RedisStreams
      yield* TestClock.setTime(1_000)
      expect(yield* redis.xadd("k", { id: "*", fields: [["a", "1"]] })).toBe("1000-0")
      expect(yield* redis.xadd("k", { id: "*", fields: [["a", "2"]] })).toBe("1000-1")
      yield* TestClock.setTime(1_005)
      expect(yield* redis.xadd("k", { id: "*", fields: [["a", "3"]] })).toBe("1005-0")
      // An explicit id ahead of the clock keeps `*` ahead of it too.
      expect(yield* redis.xadd("k", { id: "2000-7", fields: [["a", "4"]] })).toBe("2000-7")
      expect(yield* redis.xadd("k", { id: "*", fields: [["a", "5"]] })).toBe("2000-8")
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("keys expire when the clock passes their time to live", () =>
    Effect.gen(function*() {
      const redis = yield* RedisStreams
      yield* redis.xadd("s", { id: "0-1", fields: [["a", "1"]] })
      yield* redis.zadd("z", 1, "m")
      yield* redis.pexpire("s", 1_000)
      yield* redis.pexpire("z", 2_000)
      yield* TestClock.adjust(999)
      expect(yield* redis.pttl("s")).toBe(1)
      expect(yield* redis.xlen("s")).toBe(1)
      yield* TestClock.adjust(1)
      expect(yield* redis.pttl("s")).toBe(-2)
      expect(yield* redis.xrange("s", "-", "+")).toStrictEqual([])
      expect((yield* redis.zrangeByScore("z", 0, 10)).length).toBe(1)
      yield* TestClock.adjust(1_000)
      expect(yield* redis.zrangeByScore("z", 0, 10)).toStrictEqual([])
      // An expired stream starts over: its old top id no longer applies.
      expect(yield* redis.xadd("s", { id: "0-1", fields: [["a", "2"]] })).toBe("0-1")
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("each layer build is a separate store", () =>
    Effect.gen(function*() {
      yield* Effect.flatMap(RedisStreams, (redis) => redis.xadd("k", { id: "0-1", fields: [["a", "1"]] })).pipe(
        Effect.provide(RedisStreamsMemory.layer)
      )
      const length = yield* Effect.flatMap(RedisStreams, (redis) => redis.xlen("k")).pipe(
        Effect.provide(RedisStreamsMemory.layer)
      )
      expect(length).toBe(0)
    }))
})
