/**
 * Properties of the OpenAI Responses and Gemini normalizers over every transcript: any
 * split of the bytes gives the same events, corruption gives typed errors or error
 * events, and a streamed turn equals the non-streaming turn of the same content.
 */
import { describe, expect, it } from "@effect/vitest"
import { Turn } from "@sluice/accumulator"
import { StreamEvent } from "@sluice/core"
import { checkEffect } from "@sluice/testing/property"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as FastCheck from "fast-check"
import * as Gemini from "../src/gemini/Gemini.js"
import type { Normalize, NormalizeResponse } from "../src/Normalizer.js"
import * as OpenAiResponses from "../src/openai-responses/OpenAiResponses.js"
import {
  bytes,
  options,
  own,
  ownJson,
  payloads,
  recorded,
  runReads,
  runText,
  splitAt
} from "./support/normalizerHarness.js"

interface Provider {
  readonly name: string
  readonly normalize: Normalize
  readonly normalizeResponse: NormalizeResponse
  readonly transcripts: ReadonlyArray<readonly [string, string]>
}

/** Recorded Responses streams of OpenAI's hosted (provider-executed) tools. */
const hostedTools = ["web-search", "file-search", "code-interpreter", "image-generation"]

const providers: ReadonlyArray<Provider> = [
  {
    name: "openai-responses",
    normalize: OpenAiResponses.normalize,
    normalizeResponse: OpenAiResponses.normalizeResponse,
    transcripts: [
      ["recorded text-simple", recorded("openai-responses", "text-simple.sse")],
      ["recorded reasoning-summary-tool", recorded("openai-responses", "reasoning-summary-tool.sse")],
      ...hostedTools.map((name) => [`recorded ${name}`, recorded("openai-responses", `${name}.sse`)] as const),
      ...[
        "reasoning-encrypted",
        "parallel-tools",
        "refusal",
        "error-overloaded",
        "failed-rate-limit",
        "incomplete-length",
        "truncated",
        "web-search-citation",
        "hosted-tools",
        "openrouter-done",
        "xai-x-search"
      ]
        .map((name) => [name, own("openai-responses", `${name}.sse`)] as const)
    ]
  },
  {
    name: "gemini",
    normalize: Gemini.normalize,
    normalizeResponse: Gemini.normalizeResponse,
    transcripts: [
      ["recorded thought-then-tool", recorded("gemini", "thought-then-tool.sse")],
      ["recorded tool-parallel", recorded("gemini", "tool-parallel.sse")],
      ["recorded prompt-blocked-safety", recorded("gemini", "prompt-blocked-safety.sse")],
      ...[
        "text-cached-usage",
        "thought-signature-text",
        "vertex-streamed-args",
        "error-overloaded",
        "safety-finish",
        "truncated",
        "code-execution",
        "grounding"
      ]
        .map((name) => [name, own("gemini", `${name}.sse`)] as const)
    ]
  }
]

const cuts = FastCheck.array(FastCheck.nat(), { maxLength: 24 })

const Mutation = FastCheck.record({
  op: FastCheck.constantFrom("flip", "delete", "insert"),
  at: FastCheck.nat(),
  byte: FastCheck.integer({ min: 0, max: 255 })
})

const corrupt = (
  body: Uint8Array,
  mutations: ReadonlyArray<typeof Mutation extends FastCheck.Arbitrary<infer A> ? A : never>
) => {
  let out = Array.from(body)
  for (const { at, byte, op } of mutations) {
    const i = at % (out.length + 1)
    if (op === "insert") out = [...out.slice(0, i), byte, ...out.slice(i)]
    else if (out.length > 0) {
      const j = i % out.length
      if (op === "delete") out.splice(j, 1)
      else out[j] = out[j]! ^ (byte === 0 ? 1 : byte)
    }
  }
  return Uint8Array.from(out)
}

const isStreamEvent = Schema.is(StreamEvent.StreamEvent)

for (const provider of providers) {
  describe(`${provider.name} transcripts`, () => {
    for (const [name, text] of provider.transcripts) {
      const body = bytes(text)

      it.effect(
        `${name}: any split of the bytes gives the same events`,
        () =>
          checkEffect(
            FastCheck.tuple(cuts),
            ([points]) =>
              Effect.gen(function*() {
                const whole = yield* runText(provider.normalize, text)
                const split = yield* runReads(provider.normalize, splitAt(body, points))
                expect(payloads(split)).toStrictEqual(payloads(whole))
              }),
            { numRuns: 40 }
          ),
        300_000
      )

      it.effect(
        `${name}: corruption gives typed errors or error events, never a defect`,
        () =>
          checkEffect(
            FastCheck.tuple(FastCheck.array(Mutation, { minLength: 1, maxLength: 6 })),
            ([mutations]) =>
              Effect.gen(function*() {
                const exit = yield* Effect.exit(runReads(provider.normalize, [corrupt(body, mutations)]))
                if (Exit.isSuccess(exit)) {
                  const events = exit.value
                  expect(events.every(isStreamEvent)).toBe(true)
                  expect(events[events.length - 1]?.payload.type).toBe("response_done")
                } else {
                  expect(Cause.hasDies(exit.cause)).toBe(false)
                  const failure = Cause.findErrorOption(exit.cause)
                  expect(Option.map(failure, (error) => error._tag)).toSatisfy(
                    (tag: Option.Option<string>) =>
                      Option.isSome(tag) && (tag.value === "SseError" || tag.value === "WireDecodeError")
                  )
                }
              }),
            { numRuns: 60 }
          ),
        300_000
      )
    }
  })
}

/** What a turn's consumer sees: the final items, usage without the provider's raw object, finish, status, errors. */
const view = (events: ReadonlyArray<StreamEvent.StreamEvent>) => {
  const turn = Result.getOrThrow(Turn.fromEvents(events))
  const { raw: _raw, ...usage } = turn.usage
  return {
    items: turn.items.map((item) => item.final),
    usage,
    finishReason: turn.finishReason,
    status: turn.status,
    errors: turn.errors
  }
}

/** The chunks of a Gemini SSE body as Vertex AI's non-streaming array form. */
const chunksOf = (text: string): unknown =>
  text.split(/\r?\n/).filter((line) => line.startsWith("data: ")).map((line) => JSON.parse(line.slice(6)))

/** The `response` object of a Responses stream's `response.completed` event. */
const completedResponse = (text: string): unknown => {
  const line = text.split("\n").find((l) => l.startsWith("data: ") && l.includes("\"type\":\"response.completed\""))
  if (line === undefined) throw new Error("no response.completed event")
  return (JSON.parse(line.slice(6)) as { readonly response: unknown }).response
}

const pairs: ReadonlyArray<readonly [string, Provider, string, unknown]> = [
  [
    "recorded text-simple",
    providers[0]!,
    recorded("openai-responses", "text-simple.sse"),
    completedResponse(recorded("openai-responses", "text-simple.sse"))
  ],
  ...hostedTools.map(
    (name) =>
      [
        `recorded ${name}`,
        providers[0]!,
        recorded("openai-responses", `${name}.sse`),
        completedResponse(recorded("openai-responses", `${name}.sse`))
      ] as const
  ),
  ...[
    "reasoning-encrypted",
    "parallel-tools",
    "refusal",
    "failed-rate-limit",
    "incomplete-length",
    "web-search-citation",
    "hosted-tools",
    "openrouter-done",
    "xai-x-search"
  ].map(
    (name) =>
      [
        name,
        providers[0]!,
        own("openai-responses", `${name}.sse`),
        ownJson("openai-responses", `${name}.json`)
      ] as const
  ),
  ...["thought-then-tool", "tool-parallel", "prompt-blocked-safety"].map(
    (name) =>
      [
        `recorded ${name}`,
        providers[1]!,
        recorded("gemini", `${name}.sse`),
        chunksOf(recorded("gemini", `${name}.sse`))
      ] as const
  ),
  ...[
    "text-cached-usage",
    "thought-signature-text",
    "vertex-streamed-args",
    "safety-finish",
    "code-execution",
    "grounding"
  ].map(
    (name) => [name, providers[1]!, own("gemini", `${name}.sse`), ownJson("gemini", `${name}.json`)] as const
  )
]

describe("streamed turn equals the non-streaming turn of the same content", () => {
  for (const [name, provider, text, body] of pairs) {
    it.effect(`${provider.name} ${name}`, () =>
      Effect.gen(function*() {
        const streamed = yield* runText(provider.normalize, text)
        const whole = yield* provider.normalizeResponse(body, options)
        expect(view(whole)).toStrictEqual(view(streamed))
        expect(view(streamed).items.length + view(streamed).errors.length).toBeGreaterThan(0)
      }))
  }

  it.effect("openai-responses recorded reasoning-summary-tool, whose recording re-encrypts the reasoning in response.completed", () =>
    Effect.gen(function*() {
      const text = recorded("openai-responses", "reasoning-summary-tool.sse")
      const streamed = view(yield* runText(OpenAiResponses.normalize, text))
      const whole = view(yield* OpenAiResponses.normalizeResponse(completedResponse(text), options))
      const withoutEncrypted = (turn: typeof streamed) => ({
        ...turn,
        items: turn.items.map((item) => (item?.type === "reasoning" ? { ...item, encrypted_content: "" } : item))
      })
      expect(withoutEncrypted(whole)).toStrictEqual(withoutEncrypted(streamed))
      const encrypted = (turn: typeof streamed) =>
        turn.items.map((item) => (item?.type === "reasoning" ? item.encrypted_content : undefined))[0]
      expect(encrypted(streamed)?.startsWith("gAAAAABqPBJWAIvE")).toBe(true)
      expect(encrypted(whole)?.startsWith("gAAAAABqPBJWmFz9")).toBe(true)
    }))
})
