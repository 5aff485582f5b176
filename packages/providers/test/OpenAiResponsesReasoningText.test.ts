/**
 * Responses reasoning text from every source it arrives by — `reasoning_text` and
 * `reasoning_summary_text` deltas, their `.done` events, `content_part.done` /
 * `reasoning_summary_part.done`, the finished item, `response.completed` — folded once
 * (OpenRouter, DeepSeek, LM Studio and routers that leave out item ids), with summary
 * and raw text kept apart.
 */
import { describe, expect, it } from "@effect/vitest"
import { Turn } from "@sluice/accumulator"
import type { StreamEvent } from "@sluice/core"
import { checkEffect } from "@sluice/testing/property"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as FastCheck from "fast-check"
import { OpenAiResponses, RoundTrip } from "../src/index.js"
import * as Providers from "../src/request/Providers.js"
import * as Arbitraries from "./support/arbitraries.js"
import { bytes, done, finals, own, payloads, runReads, runText, splitAt } from "./support/normalizerHarness.js"
import { transcriptProperties } from "./support/transcriptProperties.js"

const run = (text: string) => runText(OpenAiResponses.normalize, text)

const think = "The user asks 2+2. That is 4."

/** The text the `item_delta`s of one item carried, joined. */
const streamedOf = (events: ReadonlyArray<StreamEvent.StreamEvent>, itemId: string): string =>
  payloads(events).flatMap((p) => (p.type === "item_delta" && p.item_id === itemId ? [p.delta_content] : [])).join(
    ""
  )

const reasoningItems = (events: ReadonlyArray<StreamEvent.StreamEvent>) =>
  finals(events).filter((item) => item.type === "reasoning")

describe("Responses reasoning_text, folded once", () => {
  it.effect("deltas, then reasoning_text.done, content_part.done, the finished item and response.completed: the text once", () =>
    Effect.gen(function*() {
      const events = yield* run(own("openai-responses", "reasoning-text.sse"))
      expect(finals(events)).toStrictEqual([
        { type: "reasoning", id: "rs_rt", content: think, reasoning_kind: "raw" },
        { type: "message", id: "msg_rt", content: "4", origin: "agent" }
      ])
      expect(streamedOf(events, "rs_rt")).toBe(think)
      expect(done(events)).toMatchObject({ status: "complete", finish_reason: "stop", usage: { reasoning: 25 } })
    }))

  it.effect("reasoning_text.done alone (no deltas, an empty finished item) gives the text once", () =>
    Effect.gen(function*() {
      const events = yield* run(own("openai-responses", "reasoning-text-done-only.sse"))
      expect(reasoningItems(events)).toStrictEqual([{
        type: "reasoning",
        id: "rs_rt",
        content: think,
        reasoning_kind: "raw"
      }])
      expect(streamedOf(events, "rs_rt")).toBe(think)
    }))

  it.effect("events without item_id or output_index, items only in response.completed: one reasoning item, the text once", () =>
    Effect.gen(function*() {
      const events = yield* run(own("openai-responses", "reasoning-text-no-ids.sse"))
      const items = finals(events)
      expect(items.map((item) => item.type)).toStrictEqual(["reasoning", "message"])
      expect(items[0]).toMatchObject({ type: "reasoning", content: think })
      expect(streamedOf(events, items[0]!.id)).toBe(think)
      expect(items[1]).toMatchObject({ type: "message", id: "msg_rt", content: "4" })
    }))

  it.effect("summary parts and reasoning_text parts are kept apart: each delta states its kind, the item keeps both kinds' parts", () =>
    Effect.gen(function*() {
      const events = yield* run(own("openai-responses", "reasoning-summary-and-text.sse"))
      const summary = "**Adding** two and two."
      expect(reasoningItems(events)).toStrictEqual([{
        type: "reasoning",
        id: "rs_rt",
        content: `${think}\n\n${summary}`,
        provider_metadata: { summary: [summary], reasoning_text: [think] }
      }])
      expect(streamedOf(events, "rs_rt")).toBe(`${think}\n\n${summary}`)
      const byKind = (kind: string) =>
        payloads(events).flatMap((p) =>
          p.type === "item_delta" && p.item_id === "rs_rt" && p.reasoning_kind === kind ? [p.delta_content] : []
        ).join("")
      expect(byKind("raw")).toBe(think)
      expect(byKind("summary")).toBe(`\n\n${summary}`)
      // the fold keeps them apart too
      const turn = Result.getOrThrow(Turn.fromEvents(events))
      expect(turn.items[0]?.reasoning).toStrictEqual({ summary: `\n\n${summary}`, raw: think })
    }))

  it.effect("the non-streaming body of an item with both kinds keeps both kinds' parts apart", () =>
    Effect.gen(function*() {
      const events = yield* OpenAiResponses.normalizeResponse({
        id: "r",
        status: "completed",
        output: [{
          id: "rs_1",
          type: "reasoning",
          summary: [{ type: "summary_text", text: "S1" }, { type: "summary_text", text: "S2" }],
          content: [{ type: "reasoning_text", text: "raw" }]
        }]
      })
      expect(finals(events)).toStrictEqual([{
        type: "reasoning",
        id: "rs_1",
        content: "S1\n\nS2\n\nraw",
        provider_metadata: { summary: ["S1", "S2"], reasoning_text: ["raw"] }
      }])
    }))

  it.effect("a done text that does not extend what streamed is the finished item's; nothing is streamed twice", () =>
    Effect.gen(function*() {
      const event = (data: Record<string, unknown>) => `data: ${JSON.stringify(data)}\n\n`
      const events = yield* run(
        event({ type: "response.created", response: { id: "r", output: [] } }) +
          event({ type: "response.reasoning_text.delta", item_id: "rs_1", content_index: 0, delta: "draft" }) +
          event({ type: "response.reasoning_text.done", item_id: "rs_1", content_index: 0, text: "final text" }) +
          event({ type: "response.completed", response: { id: "r", status: "completed", output: [] } })
      )
      expect(reasoningItems(events)).toStrictEqual([{
        type: "reasoning",
        id: "rs_1",
        content: "final text",
        reasoning_kind: "raw"
      }])
      expect(streamedOf(events, "rs_1")).toBe("draft")
    }))

  it.effect("the next request sends raw reasoning back as the item's content parts, apart from its summary parts", () =>
    Effect.gen(function*() {
      const next = (name: string) =>
        Effect.map(run(own("openai-responses", name)), (events) => {
          const turn = {
            provider: "openai-responses",
            items: Turn.finalItems(Result.getOrThrow(Turn.fromEvents(events)))
          }
          const request = Result.getOrThrow(
            RoundTrip.continueWith({ model: "m", messages: [{ _tag: "user", text: "2+2?" }] }, turn)
          )
          const input = Providers.encode("openai-responses", request, { apiKey: "k", baseUrl: "http://x" }).body
            .input as ReadonlyArray<Record<string, unknown>>
          return input.find((item) => item.type === "reasoning")
        })
      expect(yield* next("reasoning-text.sse")).toStrictEqual({
        type: "reasoning",
        id: "rs_rt",
        summary: [],
        content: [{ type: "reasoning_text", text: think }]
      })
      expect(yield* next("reasoning-summary-and-text.sse")).toStrictEqual({
        type: "reasoning",
        id: "rs_rt",
        summary: [{ type: "summary_text", text: "**Adding** two and two." }],
        content: [{ type: "reasoning_text", text: think }]
      })
    }))

  describe("properties", () => {
    transcriptProperties(Providers.get("openai-responses"), [
      ["reasoning-text", own("openai-responses", "reasoning-text.sse")],
      ["reasoning-text-done-only", own("openai-responses", "reasoning-text-done-only.sse")],
      ["reasoning-text-no-ids", own("openai-responses", "reasoning-text-no-ids.sse")],
      ["reasoning-summary-and-text", own("openai-responses", "reasoning-summary-and-text.sse")]
    ])
  })
})

// ---------------------------------------------------------------------------------
// every mix of sources, at every cut point
// ---------------------------------------------------------------------------------

/** Which sources carry the text of one part: any non-empty mix. */
interface Sources {
  readonly deltas: boolean
  readonly textDone: boolean
  readonly partDone: boolean
  readonly itemDone: boolean
  readonly completed: boolean
  /** whether the events name their item (`item_id`) and index (`output_index`) */
  readonly ids: boolean
}

const sourcesArb: FastCheck.Arbitrary<Sources> = FastCheck.record({
  deltas: FastCheck.boolean(),
  textDone: FastCheck.boolean(),
  partDone: FastCheck.boolean(),
  itemDone: FastCheck.boolean(),
  completed: FastCheck.boolean(),
  ids: FastCheck.boolean()
}).filter((s) => s.deltas || s.textDone || s.partDone || s.itemDone || s.completed)

/** A part's text in pieces: non-empty pieces of printable text, some non-ASCII. */
const piecesArb = FastCheck.array(
  FastCheck.string({
    unit: FastCheck.constantFrom("a", "b", " ", ".", "é", "😀", "\n", "\""),
    minLength: 1,
    maxLength: 6
  }),
  { minLength: 1, maxLength: 5 }
)

/** A stream in which one reasoning part (summary or raw) arrives through the chosen sources. */
const transcript = (kind: "summary" | "raw", pieces: ReadonlyArray<string>, sources: Sources): string => {
  const text = pieces.join("")
  const event = (data: Record<string, unknown>) => `data: ${JSON.stringify(data)}\n\n`
  const where = (index: "summary_index" | "content_index") =>
    sources.ids ? { item_id: "rs_p", output_index: 0, [index]: 0 } : { [index]: 0 }
  const parts = kind === "summary"
    ? { summary: [{ type: "summary_text", text }], content: [] }
    : { summary: [], content: [{ type: "reasoning_text", text }] }
  const item = { id: "rs_p", type: "reasoning", ...parts }
  let body = event({ type: "response.created", response: { id: "r", output: [] } })
  if (sources.ids) {
    body += event({
      type: "response.output_item.added",
      output_index: 0,
      item: { id: "rs_p", type: "reasoning", summary: [] }
    })
  }
  if (sources.deltas) {
    for (const delta of pieces) {
      body += kind === "summary"
        ? event({ type: "response.reasoning_summary_text.delta", ...where("summary_index"), delta })
        : event({ type: "response.reasoning_text.delta", ...where("content_index"), delta })
    }
  }
  if (sources.textDone) {
    body += kind === "summary"
      ? event({ type: "response.reasoning_summary_text.done", ...where("summary_index"), text })
      : event({ type: "response.reasoning_text.done", ...where("content_index"), text })
  }
  if (sources.partDone) {
    body += kind === "summary"
      ? event({
        type: "response.reasoning_summary_part.done",
        ...where("summary_index"),
        part: { type: "summary_text", text }
      })
      : event({ type: "response.content_part.done", ...where("content_index"), part: { type: "reasoning_text", text } })
  }
  if (sources.itemDone) body += event({ type: "response.output_item.done", output_index: 0, item })
  return body + event({
    type: "response.completed",
    response: { id: "r", status: "completed", output: sources.completed ? [item] : [] }
  })
}

describe("every delta source is folded once", () => {
  it.effect(
    "any mix of sources, summary or raw, at any cut point: one reasoning item, its text once, streamed once",
    () =>
      checkEffect(
        FastCheck.tuple(
          FastCheck.constantFrom("summary" as const, "raw" as const),
          piecesArb,
          sourcesArb,
          Arbitraries.cuts
        ),
        ([kind, pieces, sources, cuts]) =>
          Effect.gen(function*() {
            const text = pieces.join("")
            const events = yield* runReads(
              OpenAiResponses.normalize,
              splitAt(bytes(transcript(kind, pieces, sources)), cuts)
            )
            const items = reasoningItems(events)
            expect(items).toHaveLength(1)
            expect(items[0]?.type === "reasoning" && items[0].content).toBe(text)
            expect(items[0]?.type === "reasoning" && items[0].provider_metadata).toBeUndefined()
            expect(items[0]?.type === "reasoning" && items[0].reasoning_kind).toBe(kind)
            expect(
              payloads(events).every((p) => p.type !== "item_delta" || p.reasoning_kind === kind)
            ).toBe(true)
            expect(streamedOf(events, items[0]!.id)).toBe(text)
            expect(done(events)).toMatchObject({ status: "complete" })
          }),
        { numRuns: 200 }
      ),
    60_000
  )
})
