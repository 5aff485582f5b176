/**
 * One keeper for every lease of a process (docs/redis.md#the-producers-lease): one
 * fiber however many leases it keeps, each lease renewed once a period, a lease found
 * gone told through `lost` and `onLost`, a Redis failure tried again next period, and
 * a lease whose scope closes no longer renewed, and a keeper whose timer runs late
 * renewing what is due when nudged. On the in-memory store, whose expiry runs on
 * Effect's Clock, driven by `TestClock`.
 */
import { describe, expect, it } from "@effect/vitest"
import { RedisError } from "@sluice/redis/RedisError"
import { RedisStreams } from "@sluice/redis/RedisStreams"
import * as RedisStreamsMemory from "@sluice/redis/RedisStreamsMemory"
import { manualClock } from "@sluice/testing/clock"
import { trackFibers } from "@sluice/testing/fibers"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/testing/TestClock"
import { randomUUID } from "node:crypto"
import * as LeaseKeeper from "../src/LeaseKeeper.js"
import * as TurnKeys from "../src/TurnKeys.js"
import * as TurnLease from "../src/TurnLease.js"

const prefix = "keeper-test"

// The in-memory store, with its PEXPIRE calls counted and, while `failing`, refused.
const counted = Effect.gen(function*() {
  const redis = yield* RedisStreamsMemory.make
  const renewals = yield* Ref.make(0)
  const failing = yield* Ref.make(false)
  const service: typeof redis = {
    ...redis,
    pexpire: (key, ms) =>
      Effect.flatMap(Ref.get(failing), (fail) =>
        fail
          ? Effect.fail(new RedisError({ reason: "Unavailable", command: "PEXPIRE", key, detail: "down" }))
          : Effect.andThen(Ref.update(renewals, (n) => n + 1), redis.pexpire(key, ms)))
  }
  return { service, renewals, failing }
})

describe("LeaseKeeper", () => {
  it.effect("keeps 200 leases with one fiber, each renewed once a period, all held for a minute", () =>
    Effect.gen(function*() {
      const { renewals, service } = yield* counted
      const fibers = yield* trackFibers
      const turns = Array.from({ length: 200 }, () => randomUUID())
      yield* Effect.gen(function*() {
        const keeper = yield* LeaseKeeper.make
        const before = yield* fibers.active
        yield* Effect.forEach(turns, (turnId) =>
          TurnLease.hold(prefix, turnId, { leaseMs: 6_000 }).pipe(
            Effect.provideService(LeaseKeeper.LeaseKeeper, keeper)
          ), { discard: true })
        expect(yield* keeper.size).toBe(200)
        // holding 200 leases started no fiber that stays
        expect(yield* fibers.active).toBe(before)
        for (let period = 1; period <= 30; period++) {
          yield* TestClock.adjust("2 seconds")
          expect(yield* Ref.get(renewals)).toBe(200 * period)
        }
        for (const turnId of turns) expect(yield* TurnLease.state(prefix, turnId)).toBe("held")
      }).pipe(fibers.track, Effect.scoped, Effect.provideService(RedisStreams, service))
      for (const turnId of turns) {
        expect(yield* Effect.provideService(TurnLease.state(prefix, turnId), RedisStreams, service)).toBe("lapsed")
      }
    }))

  it.effect("tells a lease found gone through lost and onLost, and stops renewing it", () =>
    Effect.gen(function*() {
      const { renewals, service } = yield* counted
      yield* Effect.gen(function*() {
        const keeper = yield* LeaseKeeper.make
        const told = yield* Ref.make(0)
        const gone = randomUUID()
        const kept = randomUUID()
        const hold = (turnId: string) =>
          TurnLease.hold(prefix, turnId, {
            leaseMs: 6_000,
            renewEveryMs: 2_000,
            onLost: Ref.update(told, (n) => n + 1)
          }).pipe(Effect.provideService(LeaseKeeper.LeaseKeeper, keeper))
        const lost = yield* hold(gone)
        const alive = yield* hold(kept)
        yield* service.pexpire(TurnKeys.leaseKey(prefix, gone), 0)
        yield* TestClock.adjust("2 seconds")
        expect(yield* Deferred.isDone(lost.lost)).toBe(true)
        expect(yield* Deferred.isDone(alive.lost)).toBe(false)
        expect(yield* Ref.get(told)).toBe(1)
        expect(yield* keeper.size).toBe(1)
        const after = yield* Ref.get(renewals)
        yield* TestClock.adjust("2 seconds")
        // only the one still held is renewed
        expect(yield* Ref.get(renewals)).toBe(after + 1)
        expect(yield* Ref.get(told)).toBe(1)
      }).pipe(Effect.scoped, Effect.provideService(RedisStreams, service))
    }))

  it.effect("a renewal refused by Redis is tried again next period, and the lease lives on", () =>
    Effect.gen(function*() {
      const { failing, service } = yield* counted
      yield* Effect.gen(function*() {
        const keeper = yield* LeaseKeeper.make
        const turnId = randomUUID()
        const lease = yield* TurnLease.hold(prefix, turnId, { leaseMs: 6_000, renewEveryMs: 2_000 }).pipe(
          Effect.provideService(LeaseKeeper.LeaseKeeper, keeper)
        )
        yield* Ref.set(failing, true)
        yield* TestClock.adjust("2 seconds")
        yield* Ref.set(failing, false)
        yield* TestClock.adjust("2 seconds")
        yield* TestClock.adjust("5 seconds")
        expect(yield* TurnLease.state(prefix, turnId)).toBe("held")
        expect(yield* Deferred.isDone(lease.lost)).toBe(false)
      }).pipe(Effect.scoped, Effect.provideService(RedisStreams, service))
    }))

  it.effect("a lease whose scope closes is no longer renewed and lapses; the others go on", () =>
    Effect.gen(function*() {
      const { renewals, service } = yield* counted
      yield* Effect.gen(function*() {
        const keeper = yield* LeaseKeeper.make
        const hold = (turnId: string) =>
          TurnLease.hold(prefix, turnId, { leaseMs: 6_000, renewEveryMs: 2_000 }).pipe(
            Effect.provideService(LeaseKeeper.LeaseKeeper, keeper)
          )
        const ended = randomUUID()
        const running = randomUUID()
        const scope = yield* Scope.make()
        yield* Scope.provide(hold(ended), scope)
        yield* hold(running)
        yield* Scope.close(scope, Exit.void)
        expect(yield* keeper.size).toBe(1)
        expect(yield* TurnLease.state(prefix, ended)).toBe("lapsed")
        const before = yield* Ref.get(renewals)
        yield* TestClock.adjust("10 seconds")
        expect(yield* Ref.get(renewals)).toBe(before + 5)
        expect(yield* TurnLease.state(prefix, running)).toBe("held")
      }).pipe(Effect.scoped, Effect.provideService(RedisStreams, service))
    }))

  it.effect("a keeper whose timer runs late renews the leases that are due when nudged, and only those", () =>
    Effect.gen(function*() {
      const { renewals, service } = yield* counted
      // a clock whose time the test sets and whose timers it never fires: an event
      // loop too busy with I/O to run them
      const late = manualClock()
      const settle = late.settle
      yield* Effect.gen(function*() {
        const keeper = yield* LeaseKeeper.make
        const turnId = randomUUID()
        yield* TurnLease.hold(prefix, turnId, { leaseMs: 6_000, renewEveryMs: 2_000 }).pipe(
          Effect.provideService(LeaseKeeper.LeaseKeeper, keeper)
        )
        yield* settle
        yield* late.setTime(2_500)
        yield* settle
        // due, and its timer never fires
        expect(yield* Ref.get(renewals)).toBe(0)
        yield* keeper.nudge
        yield* settle
        expect(yield* Ref.get(renewals)).toBe(1)
        // next due at 4,500: a nudge before then renews nothing
        yield* late.setTime(3_000)
        yield* keeper.nudge
        yield* settle
        expect(yield* Ref.get(renewals)).toBe(1)
        yield* late.setTime(4_600)
        yield* keeper.nudge
        yield* keeper.nudge
        yield* settle
        expect(yield* Ref.get(renewals)).toBe(2)
      }).pipe(
        Effect.scoped,
        Effect.provideService(Clock.Clock, late.clock),
        Effect.provideService(RedisStreams, service)
      )
    }))
})
