/**
 * SIGINT and SIGTERM to a real `sluice replay` process mid-turn, signalled by pid: the
 * turn ends `aborted` in both streams on the test's redis-server, and the process
 * exits 128 + the signal's number.
 */
import { describe, expect, it } from "@effect/vitest"
import { RedisStreamsLive } from "@sluice/redis"
import { RedisStreams } from "@sluice/redis"
import { TurnEntry, TurnKeys } from "@sluice/turns"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { inject } from "vitest"
// the type of inject("redisUrl"), which the redis package's global setup provides
import type {} from "@sluice/testing/redis/globalSetup"

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, "..", "..", "..")
const bin = join(here, "..", "src", "bin.ts")
const sample = join(here, "..", "samples", "anthropic-weather.sse")
const redisUrl = inject("redisUrl")
const prefix = `sluice-signals-${randomUUID().slice(0, 8)}`

/** Starts a paced replay; resolves with its exit code once it was signalled mid-turn. */
const replayUntilSignalled = (turnId: string, signal: "SIGINT" | "SIGTERM") =>
  Effect.callback<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((resume) => {
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        bin,
        "replay",
        "--provider",
        "anthropic",
        "--pace",
        "realtime",
        "--delay-ms",
        "200",
        "--turn",
        turnId,
        "--prefix",
        prefix,
        sample
      ],
      { cwd: root, env: { ...process.env, REDIS_URL: redisUrl } }
    )
    let stdout = ""
    let stderr = ""
    let sent = false
    child.stdout.on("data", (data: Buffer) => {
      stdout += data.toString()
      // the turn has started streaming: an item's first upsert is out
      if (!sent && stdout.includes("upsert message/")) {
        sent = true
        child.kill(signal)
      }
    })
    child.stderr.on("data", (data: Buffer) => void (stderr += data.toString()))
    child.on("exit", (code) => resume(Effect.succeed({ code, stdout, stderr })))
    return Effect.sync(() => void child.kill("SIGKILL"))
  })

const lastPayloads = (turnId: string) =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams.RedisStreams
    const a = yield* redis.xrange(TurnKeys.eventsKey(prefix, turnId), "-", "+")
    const b = yield* redis.xrange(TurnKeys.upsertsKey(prefix, turnId), "-", "+")
    const lastA = yield* TurnEntry.toStreamEvent(a.at(-1)!)
    const lastB = yield* TurnEntry.toStreamBMessage(b.at(-1)!)
    return { a: lastA.payload, b: JSON.parse(lastB.payload) as unknown, finalB: b.filter(TurnEntry.isFinal).length }
  }).pipe(Effect.provide(RedisStreamsLive.layer({ url: redisUrl })))

describe("sluice replay, signalled mid-turn", () => {
  for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
    it.live(`${signal}: both streams end aborted, and the process exits ${code}`, () =>
      Effect.gen(function*() {
        const turnId = randomUUID()
        const result = yield* replayUntilSignalled(turnId, signal)
        expect([result.code, result.stderr]).toStrictEqual([code, ""])
        const last = yield* lastPayloads(turnId)
        expect(last.a).toMatchObject({ type: "response_done", status: "aborted" })
        expect(last.b).toMatchObject({ type: "turn_completed", status: "aborted" })
        expect(last.finalB).toBe(1)
      }), 120_000)
  }
})
