/**
 * A turn on a real Redis Cluster (three masters started for the file): the publisher
 * suite (batch and pipelined writes), the turn lifecycle, and a turn whose slot moves
 * to another master mid-turn.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { isRetryable } from "@sluice/redis/RedisError"
import { RedisStreams } from "@sluice/redis/RedisStreams"
import * as RedisStreamsCluster from "@sluice/redis/RedisStreamsCluster"
import { startRedisCluster } from "@sluice/testing/redis"
import { kept, upsertMessages } from "@sluice/testing/turns"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import * as TurnEntry from "../src/TurnEntry.js"
import * as TurnKeys from "../src/TurnKeys.js"
import * as TurnPublisher from "../src/TurnPublisher.js"
import { lifecycleSuite } from "./support/lifecycleSuite.js"
import { lazySource } from "./support/published.js"
import { publisherSuite } from "./support/publisherSuite.js"

const cluster = await startRedisCluster()
afterAll(() => cluster.close(), 60_000)

const nodes = cluster.nodes.map(({ port }) => ({ host: "127.0.0.1", port }))

publisherSuite("TurnPublisher on RedisStreamsCluster", RedisStreamsCluster.layer({ nodes }))
publisherSuite(
  "TurnPublisher on RedisStreamsCluster, pipelined writes",
  RedisStreamsCluster.layer({ nodes, writePath: "pipeline" })
)
lifecycleSuite("turn lifecycle on RedisStreamsCluster", RedisStreamsCluster.layer({ nodes }))

describe("RedisStreamsCluster when a slot moves", () => {
  const prefix = "sluice-moved"

  it.live(
    "a turn's slot moved to another master mid-turn: writes and reads follow it, exactly once, in order",
    () =>
      Effect.gen(function*() {
        const redis = yield* RedisStreams
        const turnId = randomUUID()
        const key = TurnKeys.upsertsKey(prefix, turnId)
        const messages = upsertMessages(turnId, 120)
        const moved = lazySource(messages, (i) =>
          i === 60
            ? Effect.promise(async () => {
              const from = await cluster.nodeOf(key)
              await cluster.moveSlotOf(key, cluster.nodes.find((node) => node !== from)!)
            })
            : Effect.void)
        const passed = yield* moved.pipe(
          TurnPublisher.publishUpserts(turnId),
          Stream.runCollect,
          Effect.provide(
            TurnPublisher.layer({ prefix, maxInFlight: 8, retryBaseMs: 10, retryMaxMs: 100, retryAttempts: 20 })
          )
        )
        expect(passed).toStrictEqual(messages)
        const entries = yield* redis.xrange(key, "-", "+")
        expect(entries.map((entry) => entry.id)).toStrictEqual(kept(messages).map((entry) => entry.id))
        // A tail opened now reads from the slot's new master (a reader opened while the
        // map was old fails with Unavailable and is opened again, as readers resume).
        const followed = yield* redis.tail(key, { until: TurnEntry.isFinal }).pipe(
          Stream.mapEffect(TurnEntry.toStreamBMessage),
          Stream.runCollect,
          Effect.retry({ while: isRetryable, schedule: Schedule.spaced("100 millis"), times: 20 })
        )
        expect(followed).toStrictEqual(kept(messages).map((entry) => entry.message))
      }).pipe(Effect.provide(RedisStreamsCluster.layer({ nodes }))),
    { timeout: 120_000 }
  )
})
