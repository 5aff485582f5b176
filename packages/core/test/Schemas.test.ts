import { describe, expect, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import * as FastCheck from "fast-check"
import { FinishReason } from "../src/FinishReason.js"
import {
  Json,
  OutputItem,
  ProviderError,
  StreamBMessage,
  StreamEvent,
  UITurnEvent,
  UIUpsert,
  Usage
} from "../src/index.js"
import { SseEvent } from "../src/Sse.js"
import { fromSchema } from "./support/arbitrary.js"

// Every public schema: decode . encode = id, on the value and through JSON text.
const schemas: ReadonlyArray<readonly [string, Schema.Codec<unknown, unknown, never, never>, boolean]> = [
  ["JsonValue", Json.JsonValue, true],
  ["Usage", Usage.Usage, true],
  ["FinishReason", FinishReason, true],
  ["OutputItem", OutputItem.OutputItem, true],
  ["ErrorObject", StreamEvent.ErrorObject, true],
  ["Payload", StreamEvent.Payload, true],
  ["StreamEvent", StreamEvent.StreamEvent, true],
  ["UIUpsert", UIUpsert.UIUpsert, true],
  ["UITurnEvent", UITurnEvent.UITurnEvent, true],
  ["StreamBMessage", StreamBMessage.StreamBMessage, true],
  ["SseEvent", SseEvent, true],
  ["ProviderError", ProviderError.ProviderError, false]
]

describe("schemas", () => {
  for (const [name, schema, viaJson] of schemas) {
    it(`${name}: every arbitrary value is valid and round-trips`, () => {
      const is = Schema.is(schema)
      const encode = Schema.encodeSync(schema)
      const decode = Schema.decodeUnknownSync(schema)
      FastCheck.assert(
        FastCheck.property(fromSchema(schema), (value) => {
          expect(is(value)).toBe(true)
          const encoded = encode(value)
          // Effect's generator builds an error with its optional fields in any order: the same error,
          // made by its constructor, has them in the schema's order, as the decoder makes it
          const expected = value instanceof ProviderError.ProviderError ? new ProviderError.ProviderError(value) : value
          expect(decode(encoded)).toStrictEqual(expected)
          if (viaJson) expect(decode(JSON.parse(JSON.stringify(encoded)))).toStrictEqual(expected)
        }),
        { numRuns: 200 }
      )
    }, 60_000)
  }

  it("StreamEvent rejects an envelope whose type differs from its payload's", () => {
    const event = FastCheck.sample(fromSchema(StreamEvent.StreamEvent), 1)[0]!
    const wrongType = event.payload.type === "item_delta" ? "item_done" : "item_delta"
    expect(() => Schema.decodeUnknownSync(StreamEvent.StreamEvent)({ ...event, type: wrongType })).toThrow(
      /does not match payload type/
    )
  })

  it("StreamEvent names the bad field of a malformed event", () => {
    expect(() =>
      Schema.decodeUnknownSync(StreamEvent.StreamEvent)({
        event_id: "not-a-uuid",
        timestamp: 1,
        trace_context: {},
        run_id: "7b0b7b7e-3f0e-4c39-9a55-1f3f2bd1b6a1",
        type: "item_delta",
        payload: { type: "item_delta", item_id: "m", delta_content: "x" }
      })
    ).toThrow(/event_id/)
  })

  it("Usage.make derives total and turns missing or bad counts into zeros", () => {
    expect(Usage.make({ input: 10, output: 5, cacheRead: 3, cacheWrite: 2, reasoning: 4 })).toStrictEqual({
      input: 10,
      output: 5,
      cacheRead: 3,
      cacheWrite: 2,
      reasoning: 4,
      total: 20
    })
    expect(Usage.make({ input: Number.NaN, output: undefined, cacheRead: null, cacheWrite: -3 })).toStrictEqual(
      Usage.empty
    )
  })

  it("StreamBMessage.wrap keeps the payload as JSON text that decodes back", () => {
    FastCheck.assert(
      FastCheck.property(fromSchema(StreamBMessage.UIPayload), FastCheck.uuid(), (payload, id) => {
        const message = StreamBMessage.wrap(payload, id, 42)
        expect(message.turnId).toBe(payload.turnId)
        expect(message.payloadType).toBe(payload.type === "item_upsert" ? "item_upsert" : "turn_event")
        expect(Schema.decodeSync(Schema.fromJsonString(StreamBMessage.UIPayload))(message.payload)).toStrictEqual(
          payload
        )
      }),
      { numRuns: 100 }
    )
  }, 60_000)

  it("StreamEvent.errorObjectFromProviderError drops the raw cause", () => {
    const error = new ProviderError.ProviderError({
      type: "rate_limit",
      retryable: true,
      code: "429",
      message: "slow down",
      status: 429,
      retryAfterMs: 2000,
      raw: new Error("socket detail")
    })
    expect(StreamEvent.errorObjectFromProviderError(error)).toStrictEqual({
      code: "429",
      message: "slow down",
      type: "rate_limit",
      retryable: true,
      status: 429,
      retry_after_ms: 2000
    })
  })
})
