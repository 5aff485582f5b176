import { describe, expect, it } from "@effect/vitest"
import { Backoff } from "@sluice/core"
import * as Reconnect from "../src/Reconnect.js"

describe("Reconnect", () => {
  it("bounds each wait by core's Backoff rule", () => {
    for (const [base, max] of [[500, 30_000], [1, 10], [0, 100], [100, 0], [3, 1e308]] as const) {
      for (let attempt = 0; attempt < 1100; attempt += 7) {
        expect(Reconnect.capMs(attempt, base, max)).toBe(Backoff.delayMs(attempt, base, max))
      }
    }
  })

  it("draws the wait uniformly below the bound (full jitter)", () => {
    const options = { baseMs: 500, maxMs: 30_000 }
    expect(Reconnect.delayMs(0, options, () => 0)).toBe(0)
    expect(Reconnect.delayMs(0, options, () => 0.5)).toBe(250)
    expect(Reconnect.delayMs(3, options, () => 0.5)).toBe(2000)
    expect(Reconnect.delayMs(20, options, () => 0.999999)).toBe(30_000)
    expect(Reconnect.delayMs(2, {}, () => 0.5)).toBe(1000)
  })
})
