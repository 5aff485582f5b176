/**
 * The first design's caller calls `destroy()` and does not await it (its `destroy(): void`).
 * Sluice's `destroy()` returns a promise that flushes what is buffered and rejects when
 * that last emission fails (docs/upserts.md#destroy). Such a caller must never get an
 * unhandled rejection from it; a caller that awaits it still gets the typed error.
 */
import { describe, expect, it } from "@effect/vitest"
import type { StreamBMessage } from "@sluice/core"
import { delta, itemStart, responseStart, threadId, turnId } from "@sluice/testing/fixtures"
import { UpsertStreamProcessor } from "../src/UpsertStreamProcessor.js"

/** Lets every pending promise job and I/O callback run (a few turns of the event loop). */
const settle = async () => {
  for (let turn = 0; turn < 20; turn++) await new Promise<void>((resolve) => setImmediate(resolve))
}

/** A processor whose `onEmit` starts failing once `fail()` is called; retries off. */
const failingLater = () => {
  const emitted: Array<StreamBMessage.StreamBMessage> = []
  let failing = false
  let attemptsWhileFailing = 0
  const processor = new UpsertStreamProcessor({
    turnId,
    threadId,
    retryAttempts: 0,
    onEmit: (message) => {
      if (failing) {
        attemptsWhileFailing++
        return Promise.reject(new Error("redis is gone"))
      }
      emitted.push(message)
      return Promise.resolve()
    }
  })
  return {
    processor,
    emitted,
    fail: () => (failing = true),
    attempts: () => attemptsWhileFailing
  }
}

/** Counts the unhandled rejections Node reports while `body` runs and settles. */
const unhandledDuring = async (body: () => Promise<void>): Promise<ReadonlyArray<unknown>> => {
  const seen: Array<unknown> = []
  const listener = (reason: unknown) => void seen.push(reason)
  process.on("unhandledRejection", listener)
  try {
    await body()
    await settle()
  } finally {
    process.off("unhandledRejection", listener)
  }
  return seen
}

const openTurn = async (processor: UpsertStreamProcessor) => {
  await processor.processEvent(responseStart())
  await processor.processEvent(itemStart("msg_1", "message", { initial_content: "Hel" }))
  // a few characters: buffered, below the next threshold of the gradient
  await processor.processEvent(delta("msg_1", "lo"))
}

describe("destroy() for a caller that does not await it (docs/upserts.md)", () => {
  it("the same destroy, awaited, rejects with EmitFailed", async () => {
    const { fail, processor } = failingLater()
    await openTurn(processor)
    fail()
    await expect(processor.destroy()).rejects.toMatchObject({ _tag: "EmitFailed" })
    // later calls do nothing
    await expect(processor.destroy()).resolves.toBeUndefined()
  }, 30_000)

  it("a destroy whose final flush fails, not awaited: no unhandled rejection", async () => {
    const { attempts, emitted, fail, processor } = failingLater()
    await openTurn(processor)
    expect(emitted.map((message) => message.payloadType)).toContain("item_upsert")
    fail()
    const seen = await unhandledDuring(async () => {
      void processor.destroy()
    })
    expect(attempts()).toBeGreaterThan(0)
    expect(seen).toStrictEqual([])
  }, 30_000)

  it(
    "a destroy whose flush succeeds, not awaited: everything buffered is still emitted, the turn ends aborted",
    async () => {
      const { emitted, processor } = failingLater()
      await openTurn(processor)
      const before = emitted.length
      const seen = await unhandledDuring(async () => {
        void processor.destroy()
      })
      expect(seen).toStrictEqual([])
      expect(emitted.length).toBeGreaterThan(before)
      const last = emitted.at(-1)
      expect(last?.payloadType).toBe("turn_event")
      expect(JSON.parse(last?.payload ?? "{}")).toMatchObject({ type: "turn_completed", status: "aborted" })
      // the buffered "lo" went out before the end
      expect(emitted.slice(before).some((message) => message.payload.includes("Hello"))).toBe(true)
    },
    30_000
  )
})
