import { describe, expect, it } from "@effect/vitest"
import { StreamBMessage, StreamEvent } from "@sluice/core"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as FastCheck from "fast-check"
import { itemDeltaJson } from "../src/internal/eventJson.js"
import * as TurnEntry from "../src/TurnEntry.js"

const turnId = "5a1c2b3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
const schemaJson = Schema.encodeResult(Schema.fromJsonString(StreamEvent.StreamEvent))
const payloadOf = (event: StreamEvent.StreamEvent) =>
  Result.map(TurnEntry.fromStreamEvent(turnId, event), (fields) => fields.find(([name]) => name === "payload")?.[1])

// fast-check 3's `uuid()` and `fullUnicodeString()`, as Effect 3 re-exported them
const uuid = FastCheck.uuid({ version: [1, 2, 3, 4, 5] })
const deltaArb = FastCheck.record({
  event_id: uuid,
  timestamp: FastCheck.nat(),
  trace_context: FastCheck.record(
    { traceparent: FastCheck.string(), tracestate: FastCheck.string() },
    { requiredKeys: [] }
  ),
  run_id: uuid,
  item_id: FastCheck.string(),
  delta_content: FastCheck.string({ unit: "binary" })
}).map(({ delta_content, item_id, ...envelope }): StreamEvent.StreamEvent => ({
  ...envelope,
  type: "item_delta",
  payload: { type: "item_delta", item_id, delta_content }
}))

const base: StreamEvent.StreamEvent = {
  event_id: "11111111-2222-4333-8444-555555555555",
  timestamp: 1,
  trace_context: {},
  run_id: "66666666-7777-4888-8999-aaaaaaaaaaaa",
  type: "item_delta",
  payload: { type: "item_delta", item_id: "m1", delta_content: "hi" }
}

describe("TurnEntry.fromStreamEvent", () => {
  it.prop("writes the schema's JSON for any event", { event: StreamEvent.StreamEvent }, ({ event }) => {
    expect(payloadOf(event)).toStrictEqual(schemaJson(event))
  }, { arbitrary: { runs: 100 }, timeout: 30_000 })

  it("writes deltas by hand, as the schema would", () => {
    FastCheck.assert(
      FastCheck.property(deltaArb, (event) => {
        expect(itemDeltaJson(event)).toBeDefined()
        expect(Result.succeed(itemDeltaJson(event))).toStrictEqual(schemaJson(event))
      }),
      { numRuns: 100 }
    )
  }, 30_000)

  it("leaves fields outside the schema out of a delta's JSON", () => {
    const trace_context = { traceparent: "t", other: "x" }
    const payload = { ...base.payload, extra: 2 }
    const event = { ...base, extra: 1, trace_context, payload }
    expect(itemDeltaJson(event)).toBe(Result.getOrThrow(schemaJson(event)))
    expect(itemDeltaJson(event)).not.toContain("extra")
    expect(itemDeltaJson(event)).not.toContain("other")
  })

  it.each<[string, StreamEvent.StreamEvent]>([
    ["an event id that is not a UUID", { ...base, event_id: "e1" }],
    ["a negative timestamp", { ...base, timestamp: -1 }],
    ["a fractional timestamp", { ...base, timestamp: 1.5 }],
    ["an unsafe timestamp", { ...base, timestamp: Number.MAX_SAFE_INTEGER + 2 }],
    ["a run id that is not a UUID", { ...base, run_id: "run" }],
    ["an envelope type that is not the payload's", { ...base, type: "item_start" }]
  ])("fails a delta with %s, as the schema does", (_, event) => {
    expect(itemDeltaJson(event)).toBeUndefined()
    expect(TurnEntry.deltaFieldsLater(turnId, event)).toBeUndefined()
    expect(Result.isFailure(TurnEntry.fromStreamEvent(turnId, event))).toBe(true)
  })
})

describe("TurnEntry.deltaFieldsLater", () => {
  it("makes, each time it is called, the fields fromStreamEvent gives a delta", () => {
    FastCheck.assert(
      FastCheck.property(deltaArb, (event) => {
        const later = TurnEntry.deltaFieldsLater(turnId, event)
        expect(later).toBeDefined()
        const fields = Result.getOrThrow(TurnEntry.fromStreamEvent(turnId, event))
        expect(later?.()).toStrictEqual(fields)
        expect(later?.()).toStrictEqual(fields)
      }),
      { numRuns: 100 }
    )
  }, 30_000)

  it.prop("leaves any other event to fromStreamEvent", { event: StreamEvent.StreamEvent }, ({ event }) => {
    if (event.type !== "item_delta") expect(TurnEntry.deltaFieldsLater(turnId, event)).toBeUndefined()
    else {expect(TurnEntry.deltaFieldsLater(turnId, event)?.()).toStrictEqual(
        Result.getOrUndefined(TurnEntry.fromStreamEvent(turnId, event))
      )}
  }, { arbitrary: { runs: 100 }, timeout: 30_000 })
})

describe("TurnEntry.toJson", () => {
  const entryOf = (fields: ReadonlyArray<readonly [string, string]>) => ({ id: "1-0", fields })
  const isJson = Schema.is(TurnEntry.TurnEntryJson)

  it("gives a Stream B entry back as the StreamBMessage written", () => {
    const message = StreamBMessage.wrap(
      { type: "turn_started", turnId, threadId: base.run_id, providerId: "test" },
      base.event_id,
      1_700_000_000_000
    )
    const json = TurnEntry.toJson(entryOf(TurnEntry.fromStreamBMessage(message)))
    expect(json).toStrictEqual(message)
    expect(Schema.is(StreamBMessage.StreamBMessage)(json)).toBe(true)
  })

  it("gives a Stream A entry with its event's type and the event's JSON as text", () => {
    const fields = Result.getOrThrow(TurnEntry.fromStreamEvent(turnId, base))
    const json = TurnEntry.toJson(entryOf(fields))
    expect(isJson(json)).toBe(true)
    expect(json).toStrictEqual({
      eventId: base.event_id,
      timestamp: base.timestamp,
      turnId,
      payloadType: "item_delta",
      payload: Result.getOrThrow(schemaJson(base))
    })
  })

  it("reads a missing field as empty text and a timestamp that is no count as 0", () => {
    expect(TurnEntry.toJson(entryOf([["timestamp", "soon"]]))).toStrictEqual({
      eventId: "",
      timestamp: 0,
      turnId: "",
      payloadType: "",
      payload: ""
    })
  })
})
