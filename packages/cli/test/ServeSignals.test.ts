/**
 * SIGINT and SIGTERM to a real `sluice serve` process with a reader following a turn
 * over SSE: the process closes the open stream and exits 128 + the signal's number.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { describe, expect, it } from "@effect/vitest"
import { StreamBMessage } from "@sluice/core"
import { RedisStreams, RedisStreamsLive } from "@sluice/redis"
import { TurnEntry, TurnKeys } from "@sluice/turns"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { join } from "node:path"
import { inject } from "vitest"
// the type of inject("redisUrl"), which the redis package's global setup provides
import type {} from "@sluice/testing/redis/globalSetup"
import { Cli, Output } from "../src/index.js"

const root = join(import.meta.dirname, "..", "..", "..")
const bin = join(import.meta.dirname, "..", "src", "bin.ts")
const sample = join(import.meta.dirname, "..", "samples", "anthropic-weather.sse")
const redisUrl = inject("redisUrl")
const prefix = `sluice-serve-signals-${randomUUID().slice(0, 8)}`

/** A turn that has started and not ended: the first Stream B message of a replay, in Redis. */
const startedTurn = Effect.gen(function*() {
  const turnId = randomUUID()
  const output = Output.memory()
  yield* Cli.run(["node", "sluice", "replay", "--provider", "anthropic", "--jsonl", "--turn", turnId, sample]).pipe(
    Effect.provide(Layer.merge(NodeServices.layer, output.layer))
  )
  const first = Schema.decodeUnknownSync(StreamBMessage.StreamBMessage)(JSON.parse(output.stdout().split("\n")[0]!))
  const redis = yield* RedisStreams.RedisStreams
  yield* redis.xadd(TurnKeys.upsertsKey(prefix, turnId), { id: "*", fields: TurnEntry.fromStreamBMessage(first) })
  return turnId
}).pipe(Effect.provide(RedisStreamsLive.layer({ url: redisUrl })))

/** Serves, follows the turn over SSE, signals the server once the first event arrived. */
const serveUntilSignalled = (turnId: string, signal: "SIGINT" | "SIGTERM") =>
  Effect.callback<{ readonly code: number | null; readonly stderr: string }>((resume) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", bin, "serve", "--insecure-local", "--port", "0", "--prefix", prefix],
      { cwd: root, env: { ...process.env, REDIS_URL: undefined, SLUICE_REDIS_URL: redisUrl } }
    )
    let stdout = ""
    let stderr = ""
    let streamEnded = false
    let exitCode: number | null | undefined
    let following = false
    // done once the process has exited and the reader's stream has ended (a stream left open hangs the test)
    const settle = () => {
      if (streamEnded && exitCode !== undefined) resume(Effect.succeed({ code: exitCode, stderr }))
    }
    const follow = async (base: string) => {
      const response = await fetch(`${base}/v1/turns/${turnId}/upserts`)
      const reader = response.body!.getReader()
      let received = ""
      while (true) {
        const chunk = await reader.read().catch(() => ({ done: true, value: undefined }))
        if (chunk.done) break
        received += new TextDecoder().decode(chunk.value)
        if (received.includes("event: ") && child.exitCode === null && !child.killed) child.kill(signal)
      }
      streamEnded = true
      settle()
    }
    child.stdout.on("data", (data: Buffer) => {
      stdout += data.toString()
      const base = /the turn viewer: (http:\/\/[0-9.]+:\d+)/.exec(stdout)?.[1]
      if (base !== undefined && !following) {
        following = true
        void follow(base)
      }
    })
    child.stderr.on("data", (data: Buffer) => void (stderr += data.toString()))
    child.on("exit", (code) => {
      exitCode = code
      settle()
    })
    return Effect.sync(() => void child.kill("SIGKILL"))
  })

describe("sluice serve, signalled while a reader follows a turn", () => {
  for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
    it.live(`${signal}: the open SSE stream is closed and the process exits ${code}`, () =>
      Effect.gen(function*() {
        const turnId = yield* startedTurn
        const result = yield* serveUntilSignalled(turnId, signal)
        expect(result.code).toBe(code)
        // the only warning is the insecure-local one, and nothing worse is logged (the
        // access log's INFO lines aside)
        const notices = result.stderr.trimEnd().split("\n").filter((line) => !/^\S+ INFO /.test(line))
        expect(notices).toStrictEqual([expect.stringMatching(/WARN .*WITHOUT access control/)])
      }), 120_000)
  }
})
