/**
 * `POST /v1/turns` (docs/http.md#starting-a-turn: one call from a request to a streamed, persisted turn):
 * with a `TurnStarter` (here the pipeline on a recorded transcript), the response is
 * the turn as the AI SDK's UI message stream, its id in `x-sluice-turn-id`, while both
 * streams are persisted; read-only tokens are refused, a body that is not JSON or too
 * large is refused before the starter sees it, the starter's own refusal is answered,
 * and a server without a starter answers 501.
 */
import { describe, expect, it } from "@effect/vitest"
import { StreamEvent } from "@sluice/core"
import { TurnContext, TurnPipeline, TurnRequest, TurnSource } from "@sluice/pipeline"
import { RedisStreams, RedisStreamsMemory } from "@sluice/redis"
import { transcriptPath } from "@sluice/testing/fixtures"
import { bearer, prefix, serve } from "@sluice/testing/server"
import { TurnEntry, TurnKeys } from "@sluice/turns"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { readFileSync } from "node:fs"
import { ApiError } from "../src/ApiError.js"
import * as TurnStarter from "../src/TurnStarter.js"
import { readMessage } from "./support/uiRead.js"

const transcript = new Uint8Array(readFileSync(transcriptPath("anthropic-text.sse")))
const pipeline = TurnPipeline.layer({ publisher: { prefix } }).pipe(Layer.provideMerge(RedisStreamsMemory.layer))
const writer = bearer("token-alpha-0123456789")

// A starter that checks for `{ prompt: string }` and runs the recorded transcript.
const recorded = Effect.map(TurnPipeline.TurnPipeline, (turns) =>
  TurnStarter.TurnStarter.of({
    start: (body) =>
      Effect.gen(function*() {
        if (typeof body !== "object" || body === null || !("prompt" in body) || typeof body.prompt !== "string") {
          return yield* new ApiError({ code: "invalid_request", message: "prompt: expected a string" })
        }
        const context = yield* Effect.orDie(TurnContext.make())
        // no limit of turns on this pipeline: never refused
        const running = yield* Effect.orDie(turns.start(context, TurnSource.sse("anthropic", Stream.make(transcript))))
        return { turnId: context.turnId, events: running.events }
      })
  }))

const post = (url: string, body: string, headers: Record<string, string> = writer) =>
  Effect.promise(() =>
    fetch(`${url}/v1/turns`, { method: "POST", body, headers: { ...headers, "content-type": "application/json" } })
  )

describe("POST /v1/turns", () => {
  it.effect("streams the started turn as the UI message stream and persists it", () =>
    Effect.gen(function*() {
      const url = yield* serve().pipe(Effect.provideServiceEffect(TurnStarter.TurnStarter, recorded))
      const response = yield* post(url, JSON.stringify({ prompt: "Hi" }))
      expect(response.status).toBe(200)
      expect(response.headers.get("x-vercel-ai-ui-message-stream")).toBe("v1")
      const turnId = response.headers.get("x-sluice-turn-id")
      expect(turnId).toMatch(/^[0-9a-f-]{36}$/)
      expect(response.headers.get("location")).toBe(`/v1/turns/${turnId}`)
      const read = yield* readMessage(response)
      expect(read.errors).toStrictEqual([])
      expect((read.message?.parts ?? []).some((part) => part.type === "text" && part.text.length > 0)).toBe(true)
      const redis = yield* RedisStreams.RedisStreams
      // the turn's streams end whole, whoever reads them
      for (let round = 0; round < 1_000; round++) {
        const b = yield* redis.xrange(TurnKeys.upsertsKey(prefix, turnId!), "-", "+")
        if (b.some(TurnEntry.isFinal)) break
        yield* Effect.yieldNow
      }
      const a = yield* redis.xrange(TurnKeys.eventsKey(prefix, turnId!), "-", "+")
      const b = yield* redis.xrange(TurnKeys.upsertsKey(prefix, turnId!), "-", "+")
      expect(a.filter(TurnEntry.isFinal).length).toBe(1)
      expect(b.filter(TurnEntry.isFinal).length).toBe(1)
    }).pipe(Effect.provide(pipeline)), 60_000)

  it.effect(
    "refuses a read-only token, a body that is not JSON or too large, and what the starter refuses",
    () =>
      Effect.gen(function*() {
        const url = yield* serve({ readTokens: ["read-only-token-0123456789"], maxBodyBytes: 64 }).pipe(
          Effect.provideServiceEffect(TurnStarter.TurnStarter, recorded)
        )
        const error = (response: Response) =>
          Effect.promise(async () => {
            const body = (await response.json()) as { readonly error: { readonly code: string } }
            return [response.status, body.error.code]
          })
        expect(yield* error(yield* post(url, "{}", bearer("read-only-token-0123456789")))).toStrictEqual([
          403,
          "forbidden"
        ])
        expect(yield* error(yield* post(url, "{\"prompt\":", writer))).toStrictEqual([400, "invalid_request"])
        expect(yield* error(yield* post(url, JSON.stringify({ prompt: "x".repeat(100) })))).toStrictEqual([
          413,
          "payload_too_large"
        ])
        expect(yield* error(yield* post(url, JSON.stringify({ prompt: 1 })))).toStrictEqual([400, "invalid_request"])
        const unauthenticated = yield* post(url, "{}", {})
        expect(unauthenticated.status).toBe(401)
      }).pipe(Effect.provide(pipeline)),
    60_000
  )

  it.effect(
    "a body nested past 128 levels is 400 invalid_request naming the depth, before any check recurses into it",
    () =>
      Effect.gen(function*() {
        // a starter that checks the body as `sluice serve`'s does: by every rule of a turn request
        const checking = TurnStarter.TurnStarter.of({
          start: (body) =>
            Effect.flatMap(
              Effect.mapError(
                Effect.fromResult(TurnRequest.decode(body)),
                (error) => new ApiError({ code: "invalid_request", message: error.message })
              ),
              () => Effect.die(new Error("not started here"))
            )
        })
        const url = yield* serve({ maxBodyBytes: 1024 * 1024 }).pipe(
          Effect.provideService(TurnStarter.TurnStarter, checking)
        )
        const answer = (body: string) =>
          Effect.flatMap(post(url, body), (response) =>
            Effect.promise(async () => ({
              status: response.status,
              body: (await response.json()) as { readonly error: { readonly code: string; readonly message: string } }
            })))
        // a body nested `depth` levels deep, in a tool's JSON Schema (with a temperature
        // out of range, which the check of a turn request refuses)
        const deep = (depth: number) =>
          `{"provider":"anthropic","model":"m","temperature":7,"messages":[{"_tag":"user","text":"Hi"}],` +
          `"tools":[{"name":"t","parameters":${"{\"a\":".repeat(depth - 4)}{}${"}".repeat(depth - 4)}}]}`
        const refused = yield* answer(deep(30_000))
        expect([refused.status, refused.body.error.code]).toStrictEqual([400, "invalid_request"])
        expect(refused.body.error.message).toContain("30000 levels deep, more than the 128 accepted")
        // at the limit the body is checked as a turn request, and refused as one
        const checked = yield* answer(deep(128))
        expect([checked.status, checked.body.error.code]).toStrictEqual([400, "invalid_request"])
        expect(checked.body.error.message).toContain("temperature")
      }).pipe(Effect.provide(RedisStreamsMemory.layer)),
    60_000
  )

  it.effect(
    "an answer whose events end before the turn's last event ends with an error chunk and [DONE]",
    () =>
      Effect.gen(function*() {
        // the turn's start reached Redis, then Redis was lost: its events end there
        const context = yield* TurnContext.make()
        const start = yield* StreamEvent.make({ runId: context.runId }, {
          type: "response_start",
          response_id: context.runId,
          turn_id: context.turnId,
          thread_id: context.threadId,
          model_id: "m",
          provider_id: "anthropic",
          created_at: 1
        })
        const cut = TurnStarter.TurnStarter.of({
          start: () => Effect.succeed({ turnId: context.turnId, events: Stream.make(start) })
        })
        const url = yield* serve().pipe(Effect.provideService(TurnStarter.TurnStarter, cut))
        const response = yield* post(url, "{}")
        expect(response.status).toBe(200)
        const text = yield* Effect.promise(() => response.text())
        const chunks = text.split("\n").filter((line) => line.startsWith("data: ")).map((line) => line.slice(6))
        expect(chunks.at(-1)).toBe("[DONE]")
        const types = chunks.slice(0, -1).map((chunk) => (JSON.parse(chunk) as { readonly type: string }).type)
        expect(types.filter((type) => type === "error").length).toBe(1)
        expect(types.at(-1)).toBe("finish")
        expect(text).toContain("the turn's last event was written")
      }).pipe(Effect.provide(RedisStreamsMemory.layer)),
    60_000
  )

  it.live(
    "closing the server ends its starter's turns beside the wait for their answers: each gets its ending and [DONE]",
    () =>
      Effect.gen(function*() {
        const turns = yield* TurnPipeline.make({ publisher: { prefix }, graceMs: 200, drainMs: 2_000 })
        // a provider that never answers
        const silent = TurnStarter.TurnStarter.of({
          start: () =>
            Effect.gen(function*() {
              const context = yield* Effect.orDie(TurnContext.make())
              const running = yield* Effect.orDie(
                turns.start(context, TurnSource.events(() => Stream.never), {
                  opening: { modelId: "m", providerId: "anthropic" }
                })
              )
              return { turnId: context.turnId, events: running.events }
            }),
          cancel: turns.cancelHere,
          shutdown: turns.shutdown
        })
        const serverScope = yield* Scope.make()
        const url = yield* serve({ shutdownTimeoutMs: 10_000 }).pipe(
          Effect.provideService(TurnStarter.TurnStarter, silent),
          Scope.provide(serverScope)
        )
        const responses = yield* Effect.forEach([1, 2], () => post(url, "{}"))
        const texts = yield* Effect.forkChild(
          Effect.forEach(responses, (response) => Effect.promise(() => response.text().catch(() => "(cut)")))
        )
        yield* Scope.close(serverScope, Exit.void)
        for (const text of yield* Fiber.join(texts)) {
          expect(text).toContain(`"type":"abort","reason":"aborted"`)
          expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true)
        }
        expect((yield* turns.load).turns).toBe(0)
      }).pipe(Effect.scoped, Effect.provide(RedisStreamsMemory.layer)),
    60_000
  )

  it.effect("answers 501 on a server without a starter", () =>
    Effect.gen(function*() {
      const url = yield* serve()
      const response = yield* post(url, JSON.stringify({ prompt: "Hi" }))
      expect(response.status).toBe(501)
      const body = (yield* Effect.promise(() => response.json())) as { readonly error: { readonly code: string } }
      expect(body.error.code).toBe("not_implemented")
    }).pipe(Effect.provide(RedisStreamsMemory.layer)), 60_000)
})
