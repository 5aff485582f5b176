/**
 * The snapshot as JSON text (`TurnSnapshot.loadJson`, what `GET /v1/turns/:turnId`
 * answers): assembled from the items' texts as stored, it parses to what `load` gives,
 * for any content (quotes, backslashes, control and non-ASCII characters alike), and
 * fails on a bad entry as `load` does.
 */
import { describe, expect, it } from "@effect/vitest"
import { StreamBMessage, type UIUpsert } from "@sluice/core"
import { RedisStreams, RedisStreamsMemory } from "@sluice/redis"
import { prefix } from "@sluice/testing/server"
import { messageUpsert } from "@sluice/testing/turns"
import { TurnEntry, TurnKeys } from "@sluice/turns"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as FastCheck from "fast-check"
import { randomUUID } from "node:crypto"
import { render } from "../src/internal/snapshotJson.js"
import * as TurnSnapshot from "../src/TurnSnapshot.js"

const threadId = randomUUID()

const upsert = (turnId: string, itemId: string, content: string, changeType?: UIUpsert.UIUpsertChangeType) =>
  messageUpsert(turnId, threadId, itemId, content, changeType)

/** Stream B entries of `payloads`; an upsert's text as given for a string. */
const write = (turnId: string, payloads: ReadonlyArray<StreamBMessage.UIPayload | string>) =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams.RedisStreams
    for (const [i, payload] of payloads.entries()) {
      const message = typeof payload === "string"
        ? { ...StreamBMessage.wrap(upsert(turnId, "x", ""), randomUUID(), 1_700_000_000_000 + i), payload }
        : StreamBMessage.wrap(payload, randomUUID(), 1_700_000_000_000 + i)
      yield* redis.xadd(TurnKeys.upsertsKey(prefix, turnId), {
        id: `0-${i + 1}`,
        fields: TurnEntry.fromStreamBMessage(message)
      })
    }
  })

/** Both loads of a turn: `load`'s snapshot and `loadJson`'s text parsed. */
const both = (turnId: string) =>
  Effect.gen(function*() {
    const loaded = yield* TurnSnapshot.load(prefix, turnId)
    const json = yield* TurnSnapshot.loadJson(prefix, turnId)
    return {
      loaded: Option.getOrThrow(loaded),
      json: Option.getOrThrow(json)
    }
  })

const text = FastCheck.oneof(
  FastCheck.string({ unit: "binary" }),
  FastCheck.string({ unit: FastCheck.constantFrom("\"", "\\", "\n", "\u0000", "\u2028", "é", "😀", "</script>", "a") })
)

describe("SnapshotJson.render", () => {
  it("parses to the header with the items parsed", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.array(FastCheck.jsonValue(), { maxLength: 6 }),
        text,
        FastCheck.nat(),
        (items, modelId, entries) => {
          const header = { turnId: "t", modelId, status: "streaming", lastEventId: `0-${entries}`, entries }
          const json = render(header, items.map((item) => JSON.stringify(item)))
          expect(JSON.parse(json)).toStrictEqual({
            ...header,
            items: items.map((item) => JSON.parse(JSON.stringify(item)))
          })
        }
      )
    )
  })

  it("keeps the items' texts as they are, spaces and all", () => {
    expect(render({ turnId: "t" }, [" { \"a\" : [ 1 ] } ", "\"\\u00e9\""])).toBe(
      "{\"turnId\":\"t\",\"items\":[ { \"a\" : [ 1 ] } ,\"\\u00e9\"]}"
    )
    expect(JSON.parse(render({ turnId: "t" }, []))).toStrictEqual({ turnId: "t", items: [] })
  })
})

describe("TurnSnapshot.loadJson", () => {
  it.effect("parses to what load gives, for any content", () =>
    Effect.gen(function*() {
      const run = Effect.runPromiseWith(yield* Effect.context<never>())
      yield* Effect.promise(() =>
        FastCheck.assert(FastCheck.asyncProperty(
          FastCheck.array(FastCheck.tuple(FastCheck.constantFrom("a", "b", "c"), text), {
            minLength: 1,
            maxLength: 12
          }),
          (steps) =>
            run(
              Effect.gen(function*() {
                const turnId = randomUUID()
                yield* write(turnId, [
                  { type: "turn_started", turnId, threadId, modelId: "m" },
                  ...steps.map(([itemId, content]) => upsert(turnId, itemId, content)),
                  { type: "turn_completed", turnId, threadId, status: "complete" }
                ])
                const { json, loaded } = yield* both(turnId)
                expect(JSON.parse(json.json)).toStrictEqual(loaded)
                expect(json.status).toBe("complete")
              }).pipe(Effect.provide(RedisStreamsMemory.layer))
            )
        ))
      )
    }))

  it.effect("an upsert with fields its schema does not know is shown without them, as load shows it", () =>
    Effect.gen(function*() {
      const turnId = randomUUID()
      yield* write(turnId, [JSON.stringify({ ...upsert(turnId, "a", "hi"), extra: { big: "x" } })])
      const { json, loaded } = yield* both(turnId)
      expect(JSON.parse(json.json)).toStrictEqual(loaded)
      expect(json.json).not.toContain("extra")
      expect(loaded.items).toStrictEqual([upsert(turnId, "a", "hi")])
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("an entry whose payload is not JSON, or not a payload, fails with InvalidEntry naming it", () =>
    Effect.gen(function*() {
      for (const bad of ["{\"type\":\"item_upsert\",", "{\"type\":\"nope\"}"]) {
        const turnId = randomUUID()
        yield* write(turnId, [upsert(turnId, "a", "fine"), bad])
        const error = yield* Effect.flip(TurnSnapshot.loadJson(prefix, turnId))
        expect(error._tag).toBe("InvalidEntry")
        expect(error.message).toContain("entry 0-2")
      }
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("a turn without a Stream B is None", () =>
    Effect.gen(function*() {
      expect(Option.isNone(yield* TurnSnapshot.loadJson(prefix, randomUUID()))).toBe(true)
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))
})
