/**
 * How deep a chain of forks goes (docs/http.md#fork-depth), in both `DurableStore`
 * layers: a fork past `maxForkDepth` is refused (`TooDeep`, naming the source's level
 * and the limit) and nothing of it is left; a fork at the limit reads its whole chain.
 * A read through the chain is linear in its depth: counted in the work handed to it (a
 * read of each level, each entry's id looked at), and on a redis-server of its own in
 * the scripts it runs and the bytes Redis sends, a read at the default limit (100)
 * against one half as deep.
 */
import { describe, expect, it } from "@effect/vitest"
import type { RedisError } from "@sluice/redis/RedisError"
import { scopedRedisServer } from "@sluice/testing/redis"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Redis } from "ioredis"
import { randomUUID } from "node:crypto"
import { inject } from "vitest"
import type { DurableEntry } from "../src/DurableStore.js"
import { DurableStore } from "../src/DurableStore.js"
import * as DurableStoreLive from "../src/DurableStoreLive.js"
import * as DurableStoreMemory from "../src/DurableStoreMemory.js"
import { readThrough } from "../src/internal/storeFork.js"

const encoder = new TextEncoder()
const decoder = new TextDecoder()
const persist = { _tag: "Persist" } as const

/** A stream of `own` entries and a chain of `depth` forks of it, each at its source's tail with `own` entries of its own; the names, the last the deepest. */
const chain = (depth: number, own: number) =>
  Effect.gen(function*() {
    const store = yield* DurableStore
    const names = Array.from({ length: depth + 1 }, () => randomUUID())
    const texts = (level: number) => Array.from({ length: own }, (_, i) => encoder.encode(`${level}.${i}`))
    yield* store.commit(names[0]!, { expect: 0, set: { ct: "text/plain" }, append: texts(0), expiry: persist })
    for (let level = 1; level <= depth; level++) {
      const source = Option.getOrThrow(yield* store.load(names[level - 1]!))
      const forked = yield* store.fork(names[level]!, {
        source: names[level - 1]!,
        at: source.tail,
        set: { ct: "text/plain" },
        append: texts(level),
        expiry: persist
      })
      expect(forked._tag).toBe("Forked")
    }
    return names
  })

const texts = (entries: ReadonlyArray<DurableEntry>) => entries.map((entry) => decoder.decode(entry.data))
const expected = (depth: number, own: number) =>
  Array.from({ length: depth + 1 }, (_, level) => Array.from({ length: own }, (_, i) => `${level}.${i}`)).flat()

const depthSuite = (name: string, layer: Layer.Layer<DurableStore, RedisError>) =>
  describe(`${name}: forks at most 5 levels deep`, () => {
    it.effect(
      "a fork of a fork 5 levels deep is refused, leaving nothing; the fork at 5 reads its whole chain",
      () =>
        Effect.gen(function*() {
          const store = yield* DurableStore
          const names = yield* chain(5, 3)
          const deepest = names[5]!
          const refused = randomUUID()
          const outcome = yield* store.fork(refused, {
            source: deepest,
            at: Option.getOrThrow(yield* store.load(deepest)).tail,
            set: { ct: "text/plain" },
            append: [encoder.encode("never")],
            expiry: persist
          })
          expect(outcome).toStrictEqual({ _tag: "TooDeep", depth: 5, limit: 5 })
          expect(yield* store.load(refused)).toStrictEqual(Option.none())
          // no link left behind: the deepest goes at once
          expect(Option.getOrThrow(yield* store.load(deepest)).forks).toBe(0)
          // a fork of a shallower level still may be made
          const [, , , , fourth] = names
          expect(
            (yield* store.fork(randomUUID(), {
              source: fourth!,
              at: "0-1",
              set: { ct: "text/plain" },
              append: [],
              expiry: persist
            }))._tag
          ).toBe("Forked")
          expect(texts(yield* store.read(deepest, "0-0", 1_000))).toStrictEqual(expected(5, 3))
          expect(texts(yield* store.read(deepest, "0-7", 4))).toStrictEqual(["2.1", "2.2", "3.0", "3.1"])
          expect(texts(yield* store.read(deepest, "0-16", 10))).toStrictEqual(["5.1", "5.2"])
          // the level is bookkeeping, never a setting
          expect(Option.getOrThrow(yield* store.load(deepest)).meta).toStrictEqual({ ct: "text/plain" })
        }).pipe(Effect.provide(layer)),
      60_000
    )
  })

depthSuite("DurableStoreMemory", DurableStoreMemory.layerWith({ maxForkDepth: 5 }))
depthSuite(
  "DurableStoreLive on redis-server",
  DurableStoreLive.layer({ url: inject("redisUrl"), prefix: `durable-depth-${process.pid}`, maxForkDepth: 5 })
)

describe("a read through a chain of forks", () => {
  it.effect(
    "is linear in the depth: each level read at most twice, each entry's id looked at a bounded number of times",
    () =>
      Effect.gen(function*() {
        // a chain 2,000 deep, one entry a level, forked at each source's tail; the work counted
        const depth = 2_000
        let reads = 0
        let looks = 0
        const entry = (level: number): DurableEntry => {
          const id = `0-${level + 1}`
          return {
            get id() {
              looks++
              return id
            },
            data: encoder.encode(String(level))
          }
        }
        const levels = Array.from({ length: depth + 1 }, (_, level) => ({
          forkOf: level === 0 ? Option.none() : Option.some({ source: `s${level - 1}`, at: `0-${level}` }),
          entries: [entry(level)]
        }))
        const read = readThrough<never>((name, after, count) =>
          Effect.sync(() => {
            reads++
            const level = levels[Number(name.slice(1))]!
            const at = Option.getOrUndefined(level.forkOf)?.at ?? "0-0"
            const before = Number(after.slice(2)) < Number(at.slice(2))
            const own = level.entries.filter((e) => !before && Number(e.id.slice(2)) > Number(after.slice(2)))
            return { forkOf: level.forkOf, entries: own.slice(0, count) }
          })
        )
        const page = yield* read(`s${depth}`, "0-0", 1_000)
        expect(page.map((e) => decoder.decode(e.data))).toStrictEqual(
          Array.from({ length: 1_000 }, (_, i) => String(i))
        )
        expect(reads).toBeLessThanOrEqual(2 * (depth + 1))
        // the recursive read looked at every inherited id again at each level: about depth² / 2
        expect(looks).toBeLessThanOrEqual(10 * (depth + 1))
      }),
    60_000
  )

  it.effect(
    "on redis-server at the limit (100 levels), runs twice the scripts and sends about the bytes of one half as deep",
    () =>
      Effect.gen(function*() {
        const server = yield* scopedRedisServer()
        const redis = yield* Effect.acquireRelease(
          Effect.sync(() => new Redis(server.url, { maxRetriesPerRequest: 1 })),
          (client) => Effect.sync(() => client.disconnect())
        )
        const info = (section: string) => Effect.map(Effect.promise(() => redis.call("INFO", section)), String)
        const stats = Effect.map(
          Effect.all([info("commandstats"), info("stats")]),
          ([commands, stats]) => ({
            scripts: Number(/cmdstat_eval:calls=(\d+)/.exec(commands)?.[1] ?? 0),
            bytes: Number(/total_net_output_bytes:(\d+)/.exec(stats)?.[1] ?? 0)
          })
        )
        const measured = (name: string) =>
          Effect.gen(function*() {
            const store = yield* DurableStore
            const before = yield* stats
            const entries = yield* store.read(name, "0-0", 1_000)
            const after = yield* stats
            // the INFO of `before` is sent in the bytes of `after`: a few KB either way
            return {
              entries: entries.length,
              scripts: after.scripts - before.scripts,
              bytes: after.bytes - before.bytes
            }
          })
        const program = Effect.gen(function*() {
          const store = yield* DurableStore
          const deep = yield* chain(100, 10)
          const half = yield* chain(50, 10)
          const refused = yield* store.fork(randomUUID(), {
            source: deep[100]!,
            at: "0-0",
            set: { ct: "text/plain" },
            append: [],
            expiry: persist
          })
          expect(refused).toStrictEqual({ _tag: "TooDeep", depth: 100, limit: 100 })
          const atLimit = yield* measured(deep[100]!)
          const halfway = yield* measured(half[50]!)
          expect([atLimit.entries, halfway.entries]).toStrictEqual([1_000, 510])
          // up the chain once, down while the page has room: at most two scripts a level
          expect(atLimit.scripts).toBeLessThanOrEqual(2 * 101)
          expect(halfway.scripts).toBeLessThanOrEqual(2 * 51)
          // each entry sent once: the read at the limit sends about twice the bytes of the half-deep one
          expect(atLimit.bytes).toBeLessThan(2.5 * halfway.bytes)
        })
        yield* program.pipe(Effect.provide(DurableStoreLive.layer({ url: server.url, prefix: "depth" })))
      }),
    120_000
  )
})
