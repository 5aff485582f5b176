/**
 * The producer's lease on the in-memory store, whose expiry runs on Effect's Clock:
 * held while renewed, lapsed when the renewals stop, told apart from a turn that never
 * had one, and `lost` when a renewal finds it gone.
 */
import { describe, expect, it } from "@effect/vitest"
import { RedisStreams } from "@sluice/redis/RedisStreams"
import * as RedisStreamsMemory from "@sluice/redis/RedisStreamsMemory"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as TestClock from "effect/testing/TestClock"
import { randomUUID } from "node:crypto"
import * as TurnKeys from "../src/TurnKeys.js"
import * as TurnLease from "../src/TurnLease.js"

const prefix = "lease-test"

describe("TurnLease", () => {
  it.effect("is held while its scope is open, however long, and lapses once its scope closes", () =>
    Effect.gen(function*() {
      const turnId = randomUUID()
      expect(yield* TurnLease.state(prefix, turnId)).toBe("none")
      yield* Effect.scoped(
        Effect.gen(function*() {
          yield* TurnLease.hold(prefix, turnId, { leaseMs: 6_000 })
          for (let i = 0; i < 10; i++) {
            yield* TestClock.adjust("5 seconds")
            expect(yield* TurnLease.state(prefix, turnId)).toBe("held")
          }
        })
      )
      expect(yield* TurnLease.state(prefix, turnId)).toBe("lapsed")
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("a producer that stops renewing (killed) leaves a lease that lapses after leaseMs", () =>
    Effect.gen(function*() {
      const turnId = randomUUID()
      const redis = yield* RedisStreams
      // what hold() writes, with nobody left to renew it
      yield* redis.setPx(TurnKeys.leasedKey(prefix, turnId), "1", 86_400_000)
      yield* redis.setPx(TurnKeys.leaseKey(prefix, turnId), "1", 6_000)
      yield* TestClock.adjust("5999 millis")
      expect(yield* TurnLease.state(prefix, turnId)).toBe("held")
      yield* TestClock.adjust("1 millis")
      expect(yield* TurnLease.state(prefix, turnId)).toBe("lapsed")
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("a renewal that finds the lease gone (the producer was paused past it) completes lost", () =>
    Effect.gen(function*() {
      const turnId = randomUUID()
      const lease = yield* TurnLease.hold(prefix, turnId, { leaseMs: 6_000, renewEveryMs: 2_000 })
      yield* TestClock.adjust("2 seconds")
      expect(yield* Deferred.isDone(lease.lost)).toBe(false)
      const redis = yield* RedisStreams
      yield* redis.pexpire(TurnKeys.leaseKey(prefix, turnId), 0)
      yield* TestClock.adjust("2 seconds")
      expect(yield* Deferred.isDone(lease.lost)).toBe(true)
      expect(Option.isNone(yield* redis.get(TurnKeys.leaseKey(prefix, turnId)))).toBe(true)
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))
})
