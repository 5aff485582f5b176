/**
 * A rough edge: a `replay` or `run` whose turn is cancelled by a cancel request
 * (what `POST /v1/turns/:turnId/cancel` sends, through the control stream in Redis)
 * exits 130, the code of Ctrl-C, not 0: the user stopped the turn, so it neither ran
 * to its end nor failed on its input (docs/errors.md#exit-codes). Both streams end
 * `cancelled`, once, and the one `sluice:` line says so. On the test's redis-server.
 */
import { describe, expect, it } from "@effect/vitest"
import { RedisStreams, RedisStreamsLive } from "@sluice/redis"
import { TurnControl, TurnEntry, TurnKeys } from "@sluice/turns"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { inject } from "vitest"
// the type of inject("redisUrl"), which the redis package's global setup provides
import type {} from "@sluice/testing/redis/globalSetup"
import { recorded, serve } from "@sluice/testing/providers"
import { sluice } from "./support/sluice.js"

const here = dirname(fileURLToPath(import.meta.url))
const sample = join(here, "..", "samples", "anthropic-weather.sse")
const redisUrl = inject("redisUrl")
const prefix = `sluice-cancel-exit-${randomUUID().slice(0, 8)}`
const redis = RedisStreamsLive.layer({ url: redisUrl })

/**
 * Runs the command while a cancel request for its turn is sent every 100 ms (the first
 * may come before the turn runs, or before the command follows the control stream;
 * a request for a turn not running is ignored), until the command ends.
 */
const cancelWhileRunning = <A, E, R>(turnId: string, command: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const running = yield* Effect.forkChild(command)
    const canceller = yield* Effect.forkChild(
      TurnControl.requestCancel(prefix, turnId).pipe(
        Effect.andThen(Effect.sleep("100 millis")),
        Effect.forever
      )
    )
    const result = yield* Fiber.join(running)
    yield* Fiber.interrupt(canceller)
    return result
  })

const endings = (turnId: string) =>
  Effect.gen(function*() {
    const streams = yield* RedisStreams.RedisStreams
    const a = yield* streams.xrange(TurnKeys.eventsKey(prefix, turnId), "-", "+")
    const b = yield* streams.xrange(TurnKeys.upsertsKey(prefix, turnId), "-", "+")
    const lastA = yield* TurnEntry.toStreamEvent(a.at(-1)!)
    const lastB = yield* TurnEntry.toStreamBMessage(b.at(-1)!)
    return {
      a: lastA.payload,
      b: JSON.parse(lastB.payload) as unknown,
      finalA: a.filter(TurnEntry.isFinal).length,
      finalB: b.filter(TurnEntry.isFinal).length
    }
  })

const expectCancelled = (turnId: string, result: { readonly code: number; readonly stderr: string }) =>
  Effect.gen(function*() {
    expect(result.code).toBe(130)
    expect(result.stderr).toBe(
      `sluice: the turn ${turnId} was cancelled by a cancel request; what arrived before it is published\n`
    )
    const last = yield* endings(turnId)
    expect(last.a).toMatchObject({ type: "response_done", status: "cancelled" })
    expect(last.b).toMatchObject({ type: "turn_completed", status: "cancelled" })
    expect([last.finalA, last.finalB]).toStrictEqual([1, 1])
  })

describe("a cancelled turn's exit code", () => {
  it.live("sluice replay: cancelled mid-turn, exits 130 with one sluice: line", () =>
    Effect.gen(function*() {
      const turnId = randomUUID()
      const result = yield* cancelWhileRunning(
        turnId,
        sluice({ REDIS_URL: redisUrl }, [
          "replay",
          "--provider",
          "anthropic",
          "--pace",
          "realtime",
          "--delay-ms",
          "100",
          "--turn",
          turnId,
          "--prefix",
          prefix,
          sample
        ])
      )
      yield* expectCancelled(turnId, result)
      // the summary is printed before the failure line, with the status
      expect(result.stdout).toContain("\"status\":\"cancelled\"")
    }).pipe(Effect.provide(Layer.fresh(redis))), 60_000)

  it.live(
    "sluice run: the provider's stream stalls mid-turn, the cancel ends it, exits 130",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const turnId = randomUUID()
        // three events of the answer, then nothing until the client goes
        const server = yield* serve([{ _tag: "hang", body: recorded("anthropic/thinking-then-tool.sse"), events: 3 }])
        const result = yield* cancelWhileRunning(
          turnId,
          sluice({ REDIS_URL: redisUrl, ANTHROPIC_API_KEY: "k1" }, [
            "run",
            "--provider",
            "anthropic",
            "--model",
            "m1",
            "--base-url",
            server.url,
            "--json",
            "--turn",
            turnId,
            "--prefix",
            prefix,
            "hello"
          ])
        )
        yield* expectCancelled(turnId, result)
        expect(JSON.parse(result.stdout)).toMatchObject({ status: "cancelled" })
        // the client went: the provider's connection was closed
        yield* server.hungClosed
      })).pipe(Effect.provide(Layer.fresh(redis))),
    60_000
  )
})
