/**
 * The viewer page in headless Chromium (Debian's, driven by playwright-core), against
 * a server on the in-memory store: a finished turn renders exactly as its snapshot, a
 * running turn's text shows each state as it is published, and a stream cut mid-turn
 * resumes with `Last-Event-ID` with nothing missing or repeated, and a page whose token
 * may cancel stops a running turn with its stop button; message markdown renders
 * sanitized, tool outputs nest under their calls, and the list shows each turn's
 * provider, model and status. Screenshots of the finished turns go to
 * `test-artifacts/viewer/`.
 *
 * Skipped, saying why, only when `/usr/bin/chromium` is missing and `CI` is not set.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { type StreamBMessage, StreamEvent, UIUpsert } from "@sluice/core"
import { TurnContext, TurnPipeline, TurnSource } from "@sluice/pipeline"
import { RedisStreamsMemory } from "@sluice/redis"
import {
  browserLayer,
  connectionIs,
  contentIs,
  expectedItem,
  expectedTurn,
  expectedUsage,
  newPage,
  proxy,
  rendered,
  run,
  screenshot,
  statusIs,
  unavailable
} from "@sluice/testing/browser"
import {
  bearer,
  everyKind,
  markdownTurn,
  markdownTurnEvents,
  openingPayloads,
  prefix,
  producer,
  publishEvents,
  publishUpserts,
  replayedSample,
  request,
  serve,
  tokens
} from "@sluice/testing/server"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import { TurnSnapshot } from "../src/TurnSnapshot.js"
import * as ViewerToken from "../src/ViewerToken.js"

const pageToken = ViewerToken.issue(ViewerToken.deriveKey(tokens), 600_000)
const controlToken = ViewerToken.issue(ViewerToken.deriveKey(tokens), 600_000, "control")

// A turn that starts a message and then waits, as a slow model does.
const waitingTurn = TurnSource.events((context) =>
  Stream.concat(
    Stream.fromIterable<StreamEvent.Payload>([
      ...openingPayloads(context),
      { type: "item_delta", item_id: "msg-1", delta_content: "Thinking about it" }
    ]),
    Stream.never
  ).pipe(Stream.mapEffect((payload) => StreamEvent.make({ runId: context.runId }, payload)))
)
const decodeSnapshot = Schema.decodeUnknownEffect(TurnSnapshot)
const decodeUpsert = Schema.decodeUnknownEffect(Schema.fromJsonString(UIUpsert.UIUpsert))

const snapshotOf = (base: string, turnId: string) =>
  Effect.flatMap(request(`${base}/v1/turns/${turnId}`, bearer(tokens[0])), (reply) => decodeSnapshot(reply.body))

// The item upserts among a turn's messages, decoded.
const upsertAt = (message: StreamBMessage.StreamBMessage) =>
  message.payloadType === "item_upsert" ? Effect.asSome(decodeUpsert(message.payload)) : Effect.succeedNone

const suite = layer(browserLayer, { timeout: 120_000, excludeTestServices: true })

if (unavailable !== undefined) {
  // Like the Redis tests without redis-server: a missing browser is a failure that says
  // what to install, never a silent skip.
  describe("the viewer in headless Chromium", () => {
    it("needs Debian's chromium", () => {
      throw new Error(`cannot run the viewer tests: ${unavailable}`)
    })
  })
} else {
  suite("the viewer in headless Chromium", (it) => {
    it.effect(
      "renders a finished turn exactly as its snapshot: every kind of item, escaped, the token out of the address",
      () =>
        Effect.gen(function*() {
          const base = yield* serve()
          const token = yield* pageToken
          const sample = randomUUID()
          const kinds = randomUUID()
          const turns = [
            ["replayed-sample", sample, yield* replayedSample(sample)],
            ["every-kind", kinds, everyKind(kinds)]
          ] as const
          for (const [name, turnId, messages] of turns) {
            yield* publishUpserts(turnId, messages)
            const { page, errors } = yield* newPage
            yield* run(() => page.goto(`${base}/#access_token=${token}&turn=${turnId}`))
            yield* statusIs(page, "complete")
            const snapshot = yield* snapshotOf(base, turnId)
            expect(yield* rendered(page)).toStrictEqual(expectedTurn(snapshot))
            // The token moved out of the address bar (and the history); the turn stays.
            expect(page.url()).toBe(`${base}/#turn=${turnId}`)
            // Message text is sanitized markdown: its markup may format, never run.
            expect(yield* run(() => page.locator("#items img, #items script, #items [onerror]").count())).toBe(0)
            expect(yield* run(() => page.title())).toBe("Sluice turns")
            // Reasoning starts collapsed.
            expect(yield* run(() => page.locator("#items .reasoning details[open]").count())).toBe(0)
            yield* screenshot(page, name)
            expect(errors).toStrictEqual([])
          }
        }).pipe(Effect.provide(RedisStreamsMemory.layer)),
      120_000
    )

    it.effect(
      "shows a streaming turn's text as it grows: each published state of the message, then the final turn",
      () =>
        Effect.gen(function*() {
          const base = yield* serve()
          const turnId = randomUUID()
          const messages = yield* replayedSample(turnId)
          const produce = yield* producer(turnId, messages)
          // The page opens on a running turn: its snapshot so far, then the SSE stream.
          yield* produce.release(2)
          const token = yield* pageToken
          const { page, errors } = yield* newPage
          yield* run(() => page.goto(`${base}/#access_token=${token}&turn=${turnId}`))
          yield* connectionIs(page, "live")
          const intermediate: Array<string> = []
          for (const message of messages.slice(2)) {
            yield* produce.release(1)
            const upsert = yield* upsertAt(message)
            if (upsert._tag === "None" || upsert.value.itemType === "tool_call") continue
            // The page shows this state before the next one is even published.
            yield* contentIs(page, upsert.value.itemId, upsert.value.content)
            const shown = (yield* rendered(page)).items.find((item) => item.itemId === upsert.value.itemId)
            expect(shown).toStrictEqual(expectedItem(upsert.value))
            if (upsert.value.itemType === "message" && upsert.value.changeType !== "completed") {
              intermediate.push(upsert.value.content)
            }
          }
          yield* statusIs(page, "complete")
          const snapshot = yield* snapshotOf(base, turnId)
          const final = snapshot.items.find((item) => item.itemType === "message")!.content
          expect(intermediate.length).toBeGreaterThanOrEqual(2)
          for (const [i, content] of intermediate.entries()) {
            expect(final.startsWith(content) && content.length < final.length).toBe(true)
            if (i > 0) expect(content.startsWith(intermediate[i - 1]!)).toBe(true)
          }
          expect(yield* rendered(page)).toStrictEqual(expectedTurn(snapshot))
          yield* connectionIs(page, "finished")
          expect(errors).toStrictEqual([])
        }).pipe(Effect.provide(RedisStreamsMemory.layer)),
      120_000
    )

    it.effect(
      "a stream cut mid-turn reconnects with Last-Event-ID: nothing missing, nothing twice",
      () =>
        Effect.gen(function*() {
          const base = yield* serve()
          const relay = yield* proxy(base)
          const turnId = randomUUID()
          const messages = yield* replayedSample(turnId)
          const produce = yield* producer(turnId, messages)
          yield* produce.release(3)
          const token = yield* pageToken
          const { page, errors } = yield* newPage
          yield* run(() => page.goto(`${relay.url}/#access_token=${token}&turn=${turnId}`))
          yield* connectionIs(page, "live")
          // Up to a message half streamed, then every connection is cut.
          const before = 9
          yield* produce.release(before - 3)
          const shown = yield* upsertAt(messages[before - 1]!)
          if (shown._tag === "None") return yield* Effect.die(new Error("expected an upsert"))
          yield* contentIs(page, shown.value.itemId, shown.value.content)
          expect(yield* relay.cut).toBeGreaterThan(0)
          yield* connectionIs(page, "reconnecting")
          // The rest of the turn is published while the page is away.
          yield* produce.release(messages.length - before)
          yield* statusIs(page, "complete")
          const snapshot = yield* snapshotOf(base, turnId)
          expect(yield* rendered(page)).toStrictEqual(expectedTurn(snapshot))
          // The reconnect asked for the entries after the last one the page had.
          const streams = relay.requests().filter((head) => head.startsWith(`GET /v1/turns/${turnId}/upserts`))
          expect(streams.length).toBe(2)
          expect(streams[1]).toMatch(new RegExp(`\\r\\nlast-event-id: 0-${before}\\r\\n`, "i"))
          expect(errors).toStrictEqual([])
        }).pipe(Effect.provide(RedisStreamsMemory.layer)),
      120_000
    )

    it.effect(
      "a page whose token may cancel stops a running turn; a read-only page shows no stop button",
      () =>
        Effect.gen(function*() {
          const base = yield* serve()
          const pipeline = yield* TurnPipeline.make({ publisher: { prefix } })
          const context = yield* TurnContext.make({ prefix })
          const running = yield* Effect.forkChild(pipeline.run(context, waitingTurn))
          yield* Effect.retry(
            Effect.filterOrFail(snapshotOf(base, context.turnId), (s) => s.items.length > 0, () => "no item yet"),
            Schedule.max([Schedule.spaced("20 millis"), Schedule.recurs(500)])
          )
          const readOnly = yield* pageToken
          const control = yield* controlToken
          const reader = yield* newPage
          yield* run(() => reader.page.goto(`${base}/#access_token=${readOnly}&turn=${context.turnId}`))
          yield* contentIs(reader.page, "msg-1", "Thinking about it")
          yield* connectionIs(reader.page, "live")
          expect(yield* run(() => reader.page.locator("#stop-turn").count())).toBe(0)
          const operator = yield* newPage
          yield* run(() => operator.page.goto(`${base}/#access_token=${control}&turn=${context.turnId}`))
          yield* connectionIs(operator.page, "live")
          yield* screenshot(operator.page, "stop-button")
          yield* run(() => operator.page.click("#stop-turn"))
          // The cancel reaches the pipeline through the control stream; the turn ends
          // cancelled and both pages show it.
          const result = yield* Fiber.join(running)
          expect(result.turn.status).toBe("cancelled")
          yield* statusIs(operator.page, "cancelled")
          yield* statusIs(reader.page, "cancelled")
          yield* connectionIs(operator.page, "finished")
          expect(yield* run(() => operator.page.locator("#stop-turn").count())).toBe(0)
          const snapshot = yield* snapshotOf(base, context.turnId)
          expect(snapshot.status).toBe("cancelled")
          expect(yield* rendered(operator.page)).toStrictEqual(expectedTurn(snapshot))
          yield* screenshot(operator.page, "cancelled")
          expect(operator.errors).toStrictEqual([])
          expect(reader.errors).toStrictEqual([])
        }).pipe(Effect.provide(RedisStreamsMemory.layer)),
      120_000
    )

    it.effect(
      "renders message markdown sanitized: formatting stays, no script, handler, frame or javascript: link runs",
      () =>
        Effect.gen(function*() {
          const base = yield* serve()
          const token = yield* pageToken
          const turnId = randomUUID()
          yield* publishEvents(turnId, markdownTurnEvents(turnId))
          yield* publishUpserts(turnId, markdownTurn(turnId))
          const { page, errors } = yield* newPage
          yield* run(() => page.goto(`${base}/#access_token=${token}&turn=${turnId}`))
          yield* statusIs(page, "complete")
          const shown = yield* run(() =>
            page.evaluate<{
              owned: unknown
              heading: string | null
              strong: number
              code: string | null
              items: number
              links: ReadonlyArray<{ text: string; href: string | null; rel: string | null; target: string | null }>
              dangerous: number
            }>(`(() => {
            const content = document.querySelector('#items .item[data-item-id="msg-1"] .content')
            return {
              owned: window.owned,
              heading: content.querySelector("h1")?.textContent ?? null,
              strong: content.querySelectorAll("h1 strong").length,
              code: content.querySelector("code")?.textContent ?? null,
              items: content.querySelectorAll("ul > li").length,
              links: [...content.querySelectorAll("a")].map((a) => ({
                text: a.textContent, href: a.getAttribute("href"), rel: a.getAttribute("rel"), target: a.getAttribute("target")
              })),
              dangerous: content.querySelectorAll("script, img, iframe, [onerror], [onclick], [style]").length
            }
          })()`)
          )
          expect(shown).toStrictEqual({
            owned: undefined,
            heading: "Plan for tomorrow",
            strong: 1,
            code: "water",
            items: 2,
            links: [
              {
                text: "the trail page",
                href: "https://parks.example/ridge",
                rel: "noopener noreferrer nofollow",
                target: "_blank"
              },
              { text: "this", href: null, rel: null, target: null },
              { text: "click me", href: null, rel: null, target: null }
            ],
            dangerous: 0
          })
          // A link without an address goes nowhere and runs nothing when clicked.
          yield* run(() => page.click("text=click me"))
          expect(yield* run(() => page.evaluate("typeof window.owned"))).toBe("undefined")
          // The head breaks the usage down and says how long the turn took; the list shows its status, provider and model.
          const snapshot = yield* snapshotOf(base, turnId)
          expect(yield* rendered(page)).toStrictEqual(expectedTurn(snapshot))
          expect((yield* rendered(page)).items.map((item) => item.itemId)).toStrictEqual(["run-1-user-prompt", "msg-1"])
          expect((yield* rendered(page)).usage).toBe(
            "200 input · 900 cache read · 100 cache write · 300 output (120 reasoning) · 1500 total tokens"
          )
          expect(expectedUsage(snapshot.usage!)).toBe((yield* rendered(page)).usage)
          // From the first entry to the answer 1.5 s, to the last 4.5 s.
          yield* run(() => page.waitForSelector("#turn-head .duration", { timeout: 30_000 }))
          expect(yield* run(() => page.locator("#turn-head .duration").textContent())).toBe("took 4.5 s")
          expect(yield* run(() => page.locator("#turn-head .first-output").textContent())).toBe(
            "first output after 1.5 s"
          )
          expect(yield* run(() => page.locator(`#turn-list a[data-turn-id="${turnId}"]`).getAttribute("data-status")))
            .toBe("complete")
          expect(yield* run(() => page.locator(`#turn-list a[data-turn-id="${turnId}"] .entry-model`).textContent()))
            .toBe("openai · gpt-4.1")
          yield* screenshot(page, "markdown")
          expect(errors).toStrictEqual([])
        }).pipe(Effect.provide(RedisStreamsMemory.layer)),
      120_000
    )

    it.effect(
      "nests tool outputs under their calls by callId; provider-run tools say so; sources link only to web pages",
      () =>
        Effect.gen(function*() {
          const base = yield* serve()
          const token = yield* pageToken
          const turnId = randomUUID()
          yield* publishUpserts(turnId, everyKind(turnId))
          const { page, errors } = yield* newPage
          yield* run(() => page.goto(`${base}/#access_token=${token}&turn=${turnId}`))
          yield* statusIs(page, "complete")
          const items = (yield* rendered(page)).items
          const nesting = Object.fromEntries(
            items.filter((item) => item.itemType === "tool_output").map((item) => [item.itemId, item.parentCall])
          )
          expect(nesting).toStrictEqual({ "out-1": "call-1", "out-2": "call-2", "srv-out-1": "srv-1" })
          expect(
            yield* run(() =>
              page.locator(`#items .item[data-item-id="srv-1"] > .label .provider-executed`).textContent()
            )
          ).toBe("run by provider")
          expect(
            yield* run(() =>
              page.locator(`#items .item[data-item-id="srv-out-1"] > .label .provider-executed`).textContent()
            )
          ).toBe("run by provider")
          expect(
            yield* run(() => page.locator(`#items .item[data-item-id="call-1"] > .label .provider-executed`).count())
          ).toBe(0)
          const sources = items.find((item) => item.itemId === "msg-1")?.sources
          expect(sources?.map((source) => source.href)).toStrictEqual(["https://parks.example/ridge", null, null])
          expect(yield* run(() => page.locator("#items .sources a[href^='javascript']").count())).toBe(0)
          expect(errors).toStrictEqual([])
        }).pipe(Effect.provide(RedisStreamsMemory.layer)),
      120_000
    )
  })
}
