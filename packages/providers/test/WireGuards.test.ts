import { describe, expect, it } from "@effect/vitest"
import { SchemaGuard, Sse } from "@sluice/core"
import * as Arbitrary from "effect/Arbitrary"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as FastCheck from "fast-check"
import { Anthropic, Gemini, OpenAiChat, Providers } from "../src/index.js"

// the wire schemas every streamed event is checked against on the fast path
const wire: ReadonlyArray<readonly [string, Schema.Codec<unknown, unknown>]> = [
  ["OpenAiChat.StreamChunk", OpenAiChat.StreamChunk],
  ["OpenAiChat.Response", OpenAiChat.Response],
  ["Anthropic.StreamChunk", Anthropic.StreamChunk],
  ["Gemini.GenerateContentResponse", Gemini.GenerateContentResponse]
]

// JSON text parses to this; `String` of it throws, and Effect's union decoder calls `String` on discriminants
const unprintable: unknown = JSON.parse(`{"toString": false}`)

/**
 * Valid values, valid values with one field replaced (by JSON, or by a value `String` cannot print), and any JSON.
 * The valid values are drawn from a sample of Effect's own arbitrary of the schema's encoded side (Effect 4's
 * arbitraries are not fast-check's).
 */
const inputs = (schema: Schema.Codec<unknown, unknown>): FastCheck.Arbitrary<unknown> => {
  const valid = Effect.runSync(Arbitrary.sampleEffect(Arbitrary.schema(Schema.toEncoded(schema)), { count: 300 }))
  const encoded = FastCheck.constantFrom(...valid)
  const replacement = FastCheck.oneof(FastCheck.jsonValue(), FastCheck.constant(unprintable))
  const broken = FastCheck.tuple(encoded, replacement).map(([value, replaced]) => {
    if (typeof value !== "object" || value === null) return replaced
    const keys = Object.keys(value)
    if (keys.length === 0) return replaced
    return { ...value, [keys[keys.length - 1]!]: replaced }
  })
  return FastCheck.oneof(encoded, broken, FastCheck.jsonValue())
}

/** Effect's own answers as oracles; where Effect throws, the value is not valid (and does not decode). */
const oracles = (schema: Schema.Codec<unknown, unknown>) => {
  const is = Schema.is(schema)
  const decode = Schema.decodeUnknownResult(schema)
  return {
    is: (u: unknown): boolean => {
      try {
        return is(u)
      } catch {
        return false
      }
    },
    decodes: (u: unknown): boolean => {
      try {
        return Result.isSuccess(decode(u))
      } catch {
        return false
      }
    }
  }
}

describe("wire schema guards", () => {
  for (const [name, schema] of wire) {
    it(`the compiled guard agrees with Schema.is and the decoder: ${name}`, () => {
      const oracle = oracles(schema)
      const guard = SchemaGuard.is(schema)
      const passes = SchemaGuard.decodesToItself(schema)
      FastCheck.assert(
        FastCheck.property(
          inputs(schema),
          (u) => guard(u) === oracle.is(u) && (!passes(u) || (oracle.is(u) && oracle.decodes(u)))
        ),
        { numRuns: 300 }
      )
    }, 60_000)

    it(`says no to a discriminant that cannot be printed: ${name}`, () => {
      const poisoned = { type: unprintable, object: unprintable, candidates: unprintable }
      expect([SchemaGuard.is(schema)(poisoned), SchemaGuard.decodesToItself(schema)(poisoned)]).toStrictEqual([
        false,
        false
      ])
    })
  }

  // the events of an ordinary turn take the guard's fast path (used as they arrived, not decoded)
  const common: ReadonlyArray<readonly [string, Schema.Codec<unknown, unknown>, unknown]> = [
    ["OpenAiChat.StreamChunk", OpenAiChat.StreamChunk, {
      id: "chatcmpl-1",
      object: "chat.completion.chunk",
      created: 1,
      model: "gpt-4o",
      choices: [{ index: 0, delta: { content: "Hi" }, logprobs: null, finish_reason: null }]
    }],
    ["OpenAiChat.StreamChunk", OpenAiChat.StreamChunk, {
      id: "chatcmpl-1",
      choices: [{ index: 0, delta: { tool_calls: [{ index: 1, function: { arguments: "{\"a" } }] } }],
      usage: null
    }],
    ["OpenAiChat.StreamChunk", OpenAiChat.StreamChunk, {
      id: "chatcmpl-1",
      choices: [],
      usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8, prompt_tokens_details: { cached_tokens: 0 } }
    }],
    ["Anthropic.StreamChunk", Anthropic.StreamChunk, {
      type: "content_block_delta",
      index: 0,
      delta: { type: "text_delta", text: "Hi" }
    }],
    ["Anthropic.StreamChunk", Anthropic.StreamChunk, {
      type: "content_block_start",
      index: 1,
      content_block: { type: "tool_use", id: "toolu_1", name: "f", input: {} }
    }],
    ["Anthropic.StreamChunk", Anthropic.StreamChunk, {
      type: "message_delta",
      delta: { stop_reason: "end_turn" },
      usage: { output_tokens: 5 }
    }],
    ["Gemini.GenerateContentResponse", Gemini.GenerateContentResponse, {
      candidates: [{ content: { role: "model", parts: [{ text: "Hi" }] }, index: 0 }],
      usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 1, totalTokenCount: 4 },
      modelVersion: "gemini-2.5-pro",
      responseId: "r"
    }],
    ["Gemini.GenerateContentResponse", Gemini.GenerateContentResponse, {
      candidates: [{
        content: { role: "model", parts: [{ functionCall: { name: "f", args: { city: "Paris", days: [1, 2] } } }] },
        finishReason: "STOP",
        index: 0
      }]
    }]
  ]
  for (const [name, schema, event] of common) {
    it(`an ordinary event takes the fast path: ${name} ${JSON.stringify(event).slice(0, 60)}`, () => {
      expect(oracles(schema).decodes(event)).toBe(true)
      expect(SchemaGuard.decodesToItself(schema)(event)).toBe(true)
      expect(SchemaGuard.is(schema)(event)).toBe(true)
    })
  }

  it.effect("every provider fails with a WireDecodeError, not a defect, on an event whose type cannot be printed", () =>
    Effect.gen(function*() {
      for (const provider of Providers.all) {
        const unprintable = `{"toString": false}`
        const data =
          `{"type": ${unprintable}, "object": ${unprintable}, "candidates": [{"content": {"parts": [{"text": ${unprintable}}]}}]}`
        const body = `event: message_start\ndata: ${data}\n\n`
        const error = yield* Stream.make(new TextEncoder().encode(body)).pipe(
          Sse.decode(),
          provider.normalize(),
          Stream.runDrain,
          Effect.flip
        )
        expect([provider.name, error._tag, error._tag === "WireDecodeError" && error.reason]).toStrictEqual([
          provider.name,
          "WireDecodeError",
          "UnexpectedShape"
        ])
      }
    }))
})
