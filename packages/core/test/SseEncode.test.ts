/**
 * `Sse.encodeEvent`, Sluice's one SSE writer: its output for the turn feeds, and the
 * `data:` lines without a space the Durable Streams server writes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Sse } from "../src/index.js"

describe("Sse.encodeEvent", () => {
  it("writes id, event, retry, then a data: line per line of data, then a blank line", () => {
    expect(Sse.encodeEvent({ id: "0-1", event: "turn_event", retry: 10, data: "a\r\nb\rc\nd" })).toBe(
      "id: 0-1\nevent: turn_event\nretry: 10\ndata: a\ndata: b\ndata: c\ndata: d\n\n"
    )
    expect(Sse.encodeEvent({ event: "message", data: "x" })).toBe("data: x\n\n")
  })

  it("writes data: lines without the space when asked (the Durable Streams server's form)", () => {
    expect(Sse.encodeEvent({ event: "data", data: "[1]\r\n[2]\r[3]\n" }, { dataSpace: false })).toBe(
      "event: data\ndata:[1]\ndata:[2]\ndata:[3]\ndata:\n\n"
    )
    expect(Sse.encodeEvent({ event: "control", data: "{}" }, { dataSpace: true })).toBe("event: control\ndata: {}\n\n")
  })
})
