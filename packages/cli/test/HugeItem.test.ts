/**
 * One huge item through a real `sluice replay --jsonl` process on the test's
 * redis-server: a 23 MB transcript, one message of 20,000 deltas of 1 KB. The process
 * runs in a 320 MB heap, its lease holds (the turn ends `complete`, never
 * `producer_lost`), and what it writes is bounded by the item's size: a few dozen
 * upserts carrying a few times the message, not one whole copy every few deltas
 * (before: 146 s, 1.2 GB, the lease lost, hundreds of megabytes of `--jsonl`). Counts
 * and sizes, never timings.
 */
import { describe, expect, it } from "@effect/vitest"
import { RedisStreams, RedisStreamsLive } from "@sluice/redis"
import { TurnEntry, TurnKeys } from "@sluice/turns"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { inject } from "vitest"
import type {} from "@sluice/testing/redis/globalSetup"

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, "..", "..", "..")
const bin = join(here, "..", "src", "bin.ts")
const redisUrl = inject("redisUrl")
const prefix = `sluice-huge-${randomUUID().slice(0, 8)}`

const deltas = 20_000
const deltaText = "x".repeat(1_023) + "\n"
const messageBytes = deltas * deltaText.length

// An OpenAI Chat transcript of one message streamed in `deltas` deltas.
const transcript = (): string => {
  const chunk = (delta: object, finish: string | null) =>
    `data: ${
      JSON.stringify({
        id: "chatcmpl-huge",
        object: "chat.completion.chunk",
        created: 1,
        model: "gpt-test",
        choices: [{ index: 0, delta, finish_reason: finish }]
      })
    }\n\n`
  const parts = [chunk({ role: "assistant", content: "" }, null)]
  for (let i = 0; i < deltas; i++) parts.push(chunk({ content: deltaText }, null))
  parts.push(chunk({}, "stop"), "data: [DONE]\n\n")
  return parts.join("")
}

// Runs the replay with its stdout in a file; its exit code and stderr.
const replay = (file: string, out: string, turnId: string) =>
  Effect.callback<{ readonly code: number | null; readonly stderr: string }>((resume) => {
    const stdout = openSync(out, "w")
    const child = spawn(
      process.execPath,
      [
        "--max-old-space-size=320",
        "--import",
        "tsx",
        bin,
        "replay",
        "--provider",
        "openai-chat",
        "--jsonl",
        "--turn",
        turnId,
        "--prefix",
        prefix,
        "--redis-url",
        redisUrl,
        file
      ],
      { cwd: root, stdio: ["ignore", stdout, "pipe"] }
    )
    let stderr = ""
    child.stderr?.on("data", (chunk: Buffer) => stderr += chunk.toString("utf8"))
    child.on("exit", (code) => {
      closeSync(stdout)
      resume(Effect.succeed({ code, stderr }))
    })
    return Effect.sync(() => child.kill("SIGKILL"))
  })

describe("sluice replay of one huge item", () => {
  it.effect(
    "runs in a bounded heap, keeps its lease, and writes upserts bounded by the item's size",
    () =>
      Effect.gen(function*() {
        const dir = mkdtempSync(join(tmpdir(), "sluice-huge-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
        const file = join(dir, "huge.sse")
        writeFileSync(file, transcript())
        const out = join(dir, "out.jsonl")
        const turnId = randomUUID()
        const { code, stderr } = yield* replay(file, out, turnId)
        expect(stderr).not.toContain("heap out of memory")
        expect(code).toBe(0)
        const lines = readFileSync(out, "utf8").trim().split("\n")
        const upserts = lines.filter((line) => line.includes("\"payloadType\":\"item_upsert\""))
        expect(upserts.length).toBeLessThan(60)
        expect(statSync(out).size).toBeLessThan(6 * messageBytes)
        // Stream B ends complete: the lease held throughout.
        const entries = yield* RedisStreams.RedisStreams.use((redis) =>
          redis.xrange(TurnKeys.upsertsKey(prefix, turnId), "-", "+")
        )
        const last = yield* TurnEntry.toStreamBMessage(entries[entries.length - 1]!)
        expect(JSON.parse(last.payload)).toMatchObject({ type: "turn_completed", status: "complete" })
        expect(entries.some((entry) => entry.fields.some(([, value]) => value.includes("producer_lost")))).toBe(false)
      }).pipe(Effect.scoped, Effect.provide(RedisStreamsLive.layer({ url: redisUrl }))),
    240_000
  )
})
