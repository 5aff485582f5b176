/**
 * A rough edge, through `sluice replay` in process on the embedded store: a
 * transcript that goes on after the provider ended the turn, or starts it twice, is
 * invalid input (exit 1, one `sluice:` line naming the event and what it came after),
 * and bytes that are not UTF-8 are named at their byte and line.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { sluice } from "./support/sluice.js"

const sample = join(import.meta.dirname, "..", "samples", "anthropic-weather.sse")
const scratch = mkdtempSync(join(tmpdir(), "sluice-smaller-"))

const write = (name: string, bytes: Uint8Array | string): string => {
  const path = join(scratch, name)
  writeFileSync(path, bytes)
  return path
}

/** The line the next event of a body starts on. */
const nextLine = (text: string): number => text.split("\n").length

describe("sluice replay: input the wire does not allow", () => {
  it.effect("an event after message_stop: exit 1, the event and message_stop's line named", () =>
    Effect.gen(function*() {
      const text = readFileSync(sample, "utf8")
      const stopLine = nextLine(text.slice(0, text.lastIndexOf("event: message_stop")))
      const file = write("late.sse", text + "event: ping\ndata: {\"type\":\"ping\"}\n\n")
      const result = yield* sluice({}, ["replay", "--provider", "anthropic", file])
      expect(result.code).toBe(1)
      expect(result.stderr).toBe(
        `sluice: anthropic event at line ${nextLine(text)}: ping after message_stop (line ${stopLine})\n`
      )
    }))

  it.effect("a second message_start: exit 1, named", () =>
    Effect.gen(function*() {
      const text = readFileSync(sample, "utf8")
      const start = text.slice(0, text.indexOf("\n\n") + 2)
      expect(start).toContain("event: message_start")
      const file = write("twice.sse", start + start)
      const result = yield* sluice({}, ["replay", "--provider", "anthropic", file])
      expect(result.code).toBe(1)
      expect(result.stderr).toBe(
        `sluice: anthropic event at line ${nextLine(start)}: a second message_start (the message started at line 1)\n`
      )
    }))

  it.effect("bytes that are not UTF-8: exit 1, the byte and its line named", () =>
    Effect.gen(function*() {
      const head = "event: ping\ndata: {\"type\":\"ping\"}\n\nevent: ping\ndata: {\"type\":\"pi"
      const bytes = new Uint8Array([
        ...new TextEncoder().encode(head),
        0xc3,
        0x28,
        ...new TextEncoder().encode("\"}\n\n")
      ])
      const file = write("not-utf8.sse", bytes)
      const result = yield* sluice({}, ["normalize", "--provider", "anthropic", file])
      expect(result.code).toBe(1)
      expect(result.stderr).toBe(`sluice: SSE body is not valid UTF-8 at byte ${head.length} (line 5)\n`)
    }))
})
