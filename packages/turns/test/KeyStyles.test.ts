/**
 * The key styles (docs/redis.md#key-styles): the tagged default, the first design's plain keys
 * as an option of the publisher, and the warning of a read that finds a turn's stream
 * empty while its twin in the other style holds the turn.
 */
import { describe, expect, it } from "@effect/vitest"
import { RedisStreams } from "@sluice/redis/RedisStreams"
import * as RedisStreamsMemory from "@sluice/redis/RedisStreamsMemory"
import { upsertMessages } from "@sluice/testing/turns"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import * as TurnKeys from "../src/TurnKeys.js"
import * as TurnPublisher from "../src/TurnPublisher.js"

const turnId = "0c8d3f6e-2b1a-4d5c-8e7f-9a0b1c2d3e4f"

const capturing = <A, E, R>(lines: Array<string>, effect: Effect.Effect<A, E, R>) => {
  const logger = Logger.make<unknown, void>(({ message }) => {
    lines.push(Array.isArray(message) ? message.map(String).join(" ") : String(message))
  })
  return effect.pipe(
    Effect.updateService(
      Logger.CurrentLoggers,
      (loggers) => new Set([...loggers].map((current) => (current === Logger.defaultLogger ? logger : current)))
    )
  )
}

describe("key styles", () => {
  it("tagged by default, the first design's keys in the plain style, and each the other's twin", () => {
    expect(TurnKeys.upsertsKey("codex", turnId)).toBe(`codex:turn:{${turnId}}:upserts`)
    expect(TurnKeys.upsertsKey("codex", turnId, "plain")).toBe(`codex:turn:${turnId}:upserts`)
    expect(TurnKeys.eventsKey("codex", turnId, "plain")).toBe(`codex:turn:${turnId}:events`)
    expect(TurnKeys.twinKey(`codex:turn:${turnId}:upserts`)).toBe(`codex:turn:{${turnId}}:upserts`)
    expect(TurnKeys.twinKey(`a:b:turn:{${turnId}}:events`)).toBe(`a:b:turn:${turnId}:events`)
    expect(TurnKeys.twinKey("codex:turns")).toBeUndefined()
    expect(TurnKeys.twinKey(`codex:turn:{${turnId}}:lease`)).toBeUndefined()
  }, 30_000)

  it.effect(
    "a publisher with keyStyle plain writes the first design's keys, and only those",
    () =>
      Effect.gen(function*() {
        const id = randomUUID()
        const publisher = yield* TurnPublisher.make({ keyStyle: "plain" })
        expect(publisher.options.keyStyle).toBe("plain")
        const messages = upsertMessages(id, 3)
        yield* Stream.runDrain(Stream.fromIterable(messages).pipe(publisher.upserts(id)))
        const redis = yield* RedisStreams
        expect(yield* redis.xlen(`codex:turn:${id}:upserts`)).toBeGreaterThan(0)
        expect(yield* redis.xlen(`codex:turn:{${id}}:upserts`)).toBe(0)
      }).pipe(Effect.provide(RedisStreamsMemory.layer)),
    30_000
  )

  it.effect("a key style that is neither is refused, naming the field", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        TurnPublisher.make({ keyStyle: "braces" as unknown as TurnKeys.KeyStyle })
      )
      expect(error.detail).toMatch(/keyStyle/)
    }).pipe(Effect.provide(RedisStreamsMemory.layer)), 30_000)

  it.effect(
    "a read of the first design's key under a tagged writer is told the twin, in a warning naming both keys",
    () =>
      Effect.gen(function*() {
        const id = randomUUID()
        const publisher = yield* TurnPublisher.make()
        yield* Stream.runDrain(Stream.fromIterable(upsertMessages(id, 2)).pipe(publisher.upserts(id)))
        const lines: Array<string> = []
        const plain = `codex:turn:${id}:upserts`
        const twin = yield* capturing(lines, TurnKeys.twinHolding(plain))
        expect(twin).toStrictEqual(Option.some(`codex:turn:{${id}}:upserts`))
        expect(lines.filter((line) => line.includes(plain) && line.includes(`codex:turn:{${id}}:upserts`)))
          .toHaveLength(
            1
          )
        // a turn not started: both empty, no warning
        const quiet: Array<string> = []
        expect(yield* capturing(quiet, TurnKeys.twinHolding(`codex:turn:${randomUUID()}:upserts`))).toStrictEqual(
          Option.none()
        )
        // the key read holds entries: nothing to say
        expect(yield* capturing(quiet, TurnKeys.twinHolding(`codex:turn:{${id}}:upserts`))).toStrictEqual(Option.none())
        expect(quiet).toStrictEqual([])
      }).pipe(Effect.provide(RedisStreamsMemory.layer)),
    30_000
  )
})
