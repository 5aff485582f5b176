import { describe, expect, it } from "@effect/vitest"
import type { StreamEvent } from "@sluice/core"
import { type ProviderName, Providers } from "@sluice/providers"
import { transcriptsDir } from "@sluice/testing/fixtures"
import { checkEffect } from "@sluice/testing/property"
import * as Response from "effect/ai/Response"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as FastCheck from "fast-check"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { EffectAiStream } from "../src/index.js"
import { toParts } from "../src/internal/toParts.js"

const fixtures = transcriptsDir
const wires: ReadonlyArray<ProviderName.ProviderName> = [
  "anthropic",
  "gemini",
  "openai-chat",
  "openai-compatible",
  "openai-responses"
]

/** Every SSE transcript of the repository, with the wire API it is in. */
export const transcripts = wires.flatMap((provider) =>
  [join(fixtures, provider), join(fixtures, "recorded", provider)].flatMap((dir) => {
    let names: Array<string> = []
    try {
      names = readdirSync(dir).filter((name) => name.endsWith(".sse"))
    } catch {
      // no transcripts of this wire API here
    }
    // its final message text is not what its deltas said: a stream of parts cannot take deltas back
    names = names.filter((name) => name !== "vercel-shell-container.sse")
    return names.map((name) => ({ provider, name: `${dir}/${name}`, body: readFileSync(join(dir, name)) }))
  })
)

const json = (text: string): unknown => {
  try {
    return text.trim() === "" ? {} : JSON.parse(text)
  } catch {
    return text
  }
}

/** What the round trip keeps: every text, reasoning, call, result, source, the usage and the finish. */
const kept = (events: ReadonlyArray<StreamEvent.StreamEvent>) => {
  const items = events.flatMap((event): Array<unknown> => {
    if (event.payload.type !== "item_done") return []
    const item = event.payload.final_item
    switch (item.type) {
      case "message":
        return [{
          text: item.content,
          sources: (item.sources ?? []).map((source) => ({ kind: source.kind, url: source.url }))
        }]
      case "reasoning":
        return [{ reasoning: item.content }]
      case "function_call":
        return [{ call: item.call_id, name: item.name, arguments: json(item.arguments), ran: item.provider_executed }]
      case "function_call_output":
        return [{ result: item.call_id, output: json(item.output), success: item.success }]
      default:
        return []
    }
  })
  const done = events.flatMap((event) => event.payload.type === "response_done" ? [event.payload] : [])
  const usage = done[0]?.usage
  return {
    items,
    finish: done[0]?.finish_reason ?? "other",
    errors: events.filter((event) => event.payload.type === "response_error").length,
    usage: usage === undefined
      ? undefined
      : [usage.input, usage.output, usage.cacheRead, usage.cacheWrite, usage.reasoning]
  }
}

const bytesIn = (body: Uint8Array, cuts: ReadonlyArray<number>): Array<Uint8Array> => {
  const at = [...new Set(cuts.map((cut) => cut % (body.length + 1)))].sort((a, b) => a - b)
  const out: Array<Uint8Array> = []
  let from = 0
  for (const cut of [...at, body.length]) {
    if (cut > from) out.push(body.subarray(from, cut))
    from = Math.max(from, cut)
  }
  return out
}

/**
 * The parts as `effect/ai` decodes them without a toolkit (any tool name, parameters and
 * results as they came): `Response.StreamPart()`, the schema `LanguageModel` decodes by.
 */
const decodePart = Schema.decodeUnknownEffect(Response.StreamPart())

describe("SluiceLanguageModel round trip", () => {
  it("reads every transcript of the repository", () => {
    expect(transcripts.length).toBeGreaterThan(40)
  }, 10_000)

  it.effect(
    "Sluice events -> effect/ai parts -> Sluice events keeps every text, reasoning, call, source, usage and finish",
    () =>
      checkEffect(
        FastCheck.tuple(
          FastCheck.integer({ min: 0, max: transcripts.length - 1 }),
          FastCheck.array(FastCheck.nat(), { maxLength: 20 })
        ),
        ([which, cuts]) =>
          Effect.gen(function*() {
            const { body, name, provider } = transcripts[which]!
            const { decodeSse } = Providers.get(provider)
            const events = yield* Stream.runCollect(
              Stream.fromIterable(bytesIn(body, cuts)).pipe(decodeSse({ modelId: "m" }))
            ).pipe(Effect.orElseSucceed(() => undefined))
            // a transcript that is not its wire format on purpose fails the decoder: nothing to keep
            if (events === undefined) return
            const again = yield* Stream.runCollect(
              Stream.fromIterable(events).pipe(
                toParts("http://test", "streamText"),
                // a part effect/ai refuses fails the test, never a response_error of the turn
                Stream.mapEffect((part) => Effect.orDie(decodePart(part))),
                EffectAiStream.fromParts()
              )
            )
            const before = kept(events)
            const after = kept(again)
            if (before.items.length === 0 && before.errors > 0) {
              // the turn failed before any output: the call fails with its error, no response
              expect({ name, items: after.items, failed: after.errors > 0 }).toStrictEqual({
                name,
                items: [],
                failed: true
              })
              return
            }
            expect({ name, errors: after.errors, items: after.items, finish: after.finish }).toStrictEqual({
              name,
              errors: before.errors,
              items: before.items,
              finish: before.finish
            })
            // a turn that failed before any output fails the call: its usage is not a response's
            if (before.items.length > 0) {
              expect({ name, usage: after.usage }).toStrictEqual({ name, usage: before.usage })
            }
          }),
        { numRuns: 200 }
      ),
    120_000
  )
})
