/**
 * The thread routes (docs/http.md#threads) on the in-process server, with a
 * `ThreadStarter` that runs the pipeline on recorded transcripts: a thread's turns
 * started from what is new (a UIMessage or an OpenAI-style message), the conversation
 * read back, a regeneration's branch, one running turn at a time (409 naming it), the
 * thread's slot freed whatever the ending (a start refused, a stream that fails, a
 * cancel), thread tokens kept to their thread (403 elsewhere, 429 past their turns a
 * minute), deletion of the thread and its turns' streams, and the events resumed by
 * `Last-Event-ID`.
 */
import { describe, expect, it } from "@effect/vitest"
import { finalItems } from "@sluice/accumulator/Turn"
import { TurnContext, TurnPipeline, TurnSource } from "@sluice/pipeline"
import { RedisStreams, RedisStreamsMemory } from "@sluice/redis"
import { transcriptPath } from "@sluice/testing/fixtures"
import { bearer, call, open, prefix, serve, takeEvents, tokens } from "@sluice/testing/server"
import { ThreadError, type ThreadLog, Threads, TurnKeys } from "@sluice/turns"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { readFileSync } from "node:fs"
import { ApiError, statusOf } from "../src/ApiError.js"
import { fromThreadError, recordEnd } from "../src/internal/threadHandlers.js"
import * as ThreadStarter from "../src/ThreadStarter.js"
import * as ThreadToken from "../src/ThreadToken.js"
import * as ViewerToken from "../src/ViewerToken.js"

const transcript = new Uint8Array(readFileSync(transcriptPath("anthropic-text.sse")))
const writer = bearer(tokens[0])
const key = ViewerToken.deriveKey(tokens)

// What a turn's provider does: answer the transcript, answer its first events and then
// nothing more (a turn that runs until cancelled), answer bytes that are no wire format,
// or be refused before the turn starts.
type Plan = "answer" | "hang" | "garbage" | "refuse"

const hanging = Stream.make(transcript.subarray(0, transcript.indexOf(0x0a, 600) + 1)).pipe(
  Stream.concat(Stream.never)
)

const sourceOf = (plan: Exclude<Plan, "refuse">) =>
  plan === "answer"
    ? TurnSource.sse("anthropic", Stream.make(transcript))
    : plan === "hang"
    ? TurnSource.sse("anthropic", hanging)
    : TurnSource.sse("anthropic", Stream.make(new TextEncoder().encode("event: message_start\ndata: {oops\n\n")))

const endOf = (exit: Exit.Exit<TurnPipeline.TurnResult, unknown>): ThreadLog.TurnEnd =>
  Exit.isFailure(exit)
    ? { status: "failed", items: [], error: { code: "failed", message: "the run failed" } }
    : exit.value.stopped._tag === "Some" && exit.value.stopped.value !== "aborted"
    ? { status: exit.value.stopped.value, items: finalItems(exit.value.turn) }
    : {
      status: exit.value.turn.status === "error" ? "failed" : "completed",
      ...(exit.value.turn.runId === undefined ? {} : { responseId: exit.value.turn.runId }),
      items: finalItems(exit.value.turn)
    }

// The starter: each turn takes the next plan (`answer` once they run out); records what it was asked.
const starter = (plans: Array<Plan>, asked: Array<ThreadStarter.ThreadTurn>) =>
  Effect.map(TurnPipeline.TurnPipeline, (pipeline) =>
    ThreadStarter.ThreadStarter.of({
      check: (choice) =>
        choice.model !== undefined && choice.model !== "claude-sonnet-4-5"
          ? Effect.fail(
            new ApiError({ code: "invalid_request", message: "model: expected claude-sonnet-4-5", field: "model" })
          )
          : Effect.succeed({ provider: "anthropic", model: "claude-sonnet-4-5" }),
      start: (turn) =>
        Effect.gen(function*() {
          asked.push(turn)
          const plan = plans.shift() ?? "answer"
          if (plan === "refuse") {
            return yield* new ApiError({ code: "provider_unavailable", message: "anthropic: no API key" })
          }
          const context = yield* Effect.orDie(TurnContext.make({ turnId: turn.turnId, prefix: turn.prefix }))
          const running = yield* Effect.orDie(pipeline.start(context, sourceOf(plan)))
          return { turnId: turn.turnId, events: running.events, ended: Effect.map(Effect.exit(running.result), endOf) }
        })
    }))

const store = RedisStreamsMemory.layer
const services = Layer.mergeAll(
  TurnPipeline.layer({ publisher: { prefix }, lease: false }),
  Threads.layer({ prefix })
).pipe(Layer.provideMerge(store))

/** Serves with the starter and the thread options; the base URL. */
const serveThreads = (
  plans: Array<Plan> = [],
  asked: Array<ThreadStarter.ThreadTurn> = [],
  options: Parameters<typeof serve>[0] = {}
) =>
  Effect.flatMap(
    starter(plans, asked),
    (made) => serve(options).pipe(Effect.provideService(ThreadStarter.ThreadStarter, made))
  )

// The JSON bodies of the thread routes, as far as the tests read them.
interface Body {
  readonly error: { readonly code: string; readonly field?: string; readonly turnId?: string }
  readonly threadId: string
  readonly head: string
  readonly turnCount: number
  readonly running: { readonly turnId: string } | null
  readonly messages: ReadonlyArray<
    { readonly role: string; readonly parts: ReadonlyArray<{ readonly type: string; readonly text?: string }> }
  >
  readonly deleted: boolean
}

interface Answered {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  /** The JSON body; `null` for another body. */
  readonly json: Body
}

const send = (url: string, method: string, body?: unknown, headers: Record<string, string> = writer) =>
  Effect.promise(async (): Promise<Answered> => {
    const response = await fetch(url, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) })
    })
    const text = await response.text()
    const json: Body = JSON.parse(
      response.headers.get("content-type")?.startsWith("application/json") === true ? text : "null"
    )
    return { status: response.status, headers: response.headers, text, json }
  })

const say = (text: string, id = `m-${text.length}`) => ({
  message: { id, role: "user", parts: [{ type: "text", text }] }
})

/**
 * Waits until the thread has no running turn: its running turn's `turn_ended` read from
 * the thread's events (no polling); then the thread as GET answers it.
 */
const settled = (base: string, threadId: string, headers: Record<string, string> = writer) =>
  Effect.gen(function*() {
    const threads = yield* Threads.Threads
    const info = yield* Effect.orDie(threads.get(threadId))
    if (Option.isSome(info.running)) {
      const turnId = info.running.value.turnId
      yield* threads.events(threadId, info.lastEventId).pipe(
        Stream.takeUntil(({ event }) => event.type === "turn_ended" && event.turnId === turnId),
        Stream.runDrain,
        Effect.orDie
      )
    }
    const got = yield* send(`${base}/v1/threads/${threadId}`, "GET", undefined, headers)
    expect([got.status, got.json.running]).toStrictEqual([200, null])
    return got.json
  })

describe("thread routes", () => {
  it.effect(
    "a turn posted with a UIMessage, then one OpenAI-style: GET shows the conversation",
    () =>
      Effect.gen(function*() {
        const asked: Array<ThreadStarter.ThreadTurn> = []
        const base = yield* serveThreads([], asked)
        const first = yield* send(`${base}/v1/threads/chat-1/turns`, "POST", say("Hi there"))
        expect(first.status).toBe(200)
        expect(first.headers.get("x-vercel-ai-ui-message-stream")).toBe("v1")
        const turnId = first.headers.get("x-sluice-turn-id")
        expect(turnId).toMatch(/^[0-9a-f-]{36}$/)
        expect(first.headers.get("location")).toBe(`/v1/turns/${turnId}`)
        expect(first.text).toContain("\"type\":\"text-delta\"")
        expect(first.text.trimEnd().endsWith("data: [DONE]")).toBe(true)
        yield* settled(base, "chat-1")
        const second = yield* send(`${base}/v1/threads/chat-1/turns`, "POST", {
          message: { role: "user", content: "And again?" }
        })
        expect(second.status).toBe(200)
        const thread = yield* settled(base, "chat-1")
        expect(thread.turnCount).toBe(2)
        expect(thread.messages.map((message: { role: string }) => message.role)).toStrictEqual([
          "user",
          "assistant",
          "user",
          "assistant"
        ])
        expect(thread.messages[0]!.parts[0]).toStrictEqual({ type: "text", text: "Hi there" })
        expect(
          thread.messages[1]!.parts.some((part: { type: string; text?: string }) =>
            part.type === "text" && part.text === "Hello, wörld ☂."
          )
        ).toBe(true)
        expect(thread.messages[2]!.parts[0]).toStrictEqual({ type: "text", text: "And again?" })
        // the second turn was asked with the first's exchange before its own message
        expect(asked[1]!.messages.map((message) => message._tag)).toStrictEqual(["user", "assistant", "user"])
      }).pipe(Effect.provide(services)),
    60_000
  )

  it.effect("regenerate makes a branch: GET shows the current path", () =>
    Effect.gen(function*() {
      const base = yield* serveThreads()
      yield* send(`${base}/v1/threads/chat-r/turns`, "POST", say("One"))
      const before = yield* settled(base, "chat-r")
      const again = yield* send(`${base}/v1/threads/chat-r/turns`, "POST", { regenerate: true })
      expect(again.status).toBe(200)
      const after = yield* settled(base, "chat-r")
      expect(after.turnCount).toBe(2)
      expect(after.head).toBe(again.headers.get("x-sluice-turn-id"))
      expect(after.head).not.toBe(before.head)
      expect(after.messages.map((message: { role: string }) => message.role)).toStrictEqual(["user", "assistant"])
      // an edit of the last user message: another branch, the new text on the path
      const edit = yield* send(`${base}/v1/threads/chat-r/turns`, "POST", { ...say("Two"), replaces: after.head })
      expect(edit.status).toBe(200)
      const edited = yield* settled(base, "chat-r")
      expect(edited.turnCount).toBe(3)
      expect(edited.messages.map((message: { parts: ReadonlyArray<{ text?: string }> }) => message.parts[0]?.text))
        .toContain("Two")
      expect(edited.messages.length).toBe(2)
    }).pipe(Effect.provide(services)), 60_000)

  it.effect(
    "409 turn_running names the running turn; a thread token cancels it; the slot is freed",
    () =>
      Effect.gen(function*() {
        const base = yield* serveThreads(["hang"])
        const token = yield* ThreadToken.mint({ key, threadId: "chat-c", scope: "write", expiresIn: "1 hour" })
        const browser = bearer(token)
        const running = yield* Effect.forkScoped(send(`${base}/v1/threads/chat-c/turns`, "POST", say("Go"), browser))
        let runningId: string | null = null
        for (let round = 0; round < 20_000 && runningId === null; round++) {
          const got = yield* send(`${base}/v1/threads/chat-c`, "GET", undefined, browser)
          runningId = got.status === 200 ? got.json.running?.turnId ?? null : null
        }
        const got = yield* send(`${base}/v1/threads/chat-c`, "GET", undefined, browser)
        expect(got.json.running).toStrictEqual({
          turnId: runningId,
          uiMessageStream: `/v1/turns/${runningId}/ui-message-stream`,
          events: `/v1/turns/${runningId}/events`,
          cancel: `/v1/turns/${runningId}/cancel`
        })
        const second = yield* send(`${base}/v1/threads/chat-c/turns`, "POST", say("Again"), browser)
        expect(second.status).toBe(409)
        expect(second.json.error).toMatchObject({ code: "turn_running", turnId: runningId })
        const cancel = yield* send(`${base}/v1/turns/${runningId}/cancel`, "POST", undefined, browser)
        expect(cancel.status).toBe(202)
        const answer = yield* Fiber.join(running)
        expect(answer.status).toBe(200)
        yield* settled(base, "chat-c", browser)
        const turns = yield* Threads.Threads.use((threads) => threads.turns("chat-c"))
        expect(turns.map((turn) => turn.end._tag === "Some" ? turn.end.value.status : "running")).toStrictEqual([
          "cancelled"
        ])
        const next = yield* send(`${base}/v1/threads/chat-c/turns`, "POST", say("Next"), browser)
        expect(next.status).toBe(200)
      }).pipe(Effect.scoped, Effect.provide(services)),
    60_000
  )

  it.effect(
    "a start refused and a stream that fails both end the turn failed, freeing the slot",
    () =>
      Effect.gen(function*() {
        const base = yield* serveThreads(["refuse", "garbage"])
        const refused = yield* send(`${base}/v1/threads/chat-f/turns`, "POST", say("One"))
        expect(refused.status).toBe(503)
        expect(refused.json.error.code).toBe("provider_unavailable")
        const garbled = yield* send(`${base}/v1/threads/chat-f/turns`, "POST", say("Two"))
        expect(garbled.status).toBe(200)
        yield* settled(base, "chat-f")
        const fine = yield* send(`${base}/v1/threads/chat-f/turns`, "POST", say("Three"))
        expect(fine.status).toBe(200)
        yield* settled(base, "chat-f")
        const turns = yield* Threads.Threads.use((threads) => threads.turns("chat-f"))
        expect(turns.map((turn) => turn.end._tag === "Some" ? turn.end.value.status : "running")).toStrictEqual([
          "failed",
          "failed",
          "completed"
        ])
      }).pipe(Effect.provide(services)),
    60_000
  )

  it.effect(
    "a thread token reaches its thread only: 403 elsewhere, on /v1/turns and on Durable Streams",
    () =>
      Effect.gen(function*() {
        const base = yield* serveThreads()
        yield* send(`${base}/v1/threads/other/turns`, "POST", say("Theirs"))
        const theirs = yield* settled(base, "other")
        const token = yield* ThreadToken.mint({ key, threadId: "mine", scope: "write", expiresIn: "1 hour" })
        const browser = bearer(token)
        const status = (answered: Answered) => [answered.status, answered.json?.error?.code]
        expect(status(yield* send(`${base}/v1/threads/other`, "GET", undefined, browser))).toStrictEqual([
          403,
          "forbidden"
        ])
        expect(status(yield* send(`${base}/v1/threads/other/turns`, "POST", say("x"), browser))).toStrictEqual([
          403,
          "forbidden"
        ])
        expect(status(yield* send(`${base}/v1/turns`, "GET", undefined, browser))).toStrictEqual([403, "forbidden"])
        expect(status(yield* send(`${base}/v1/turns`, "POST", { prompt: "x" }, browser))).toStrictEqual([
          403,
          "forbidden"
        ])
        expect(status(yield* send(`${base}/v1/turns/${theirs.head}`, "GET", undefined, browser))).toStrictEqual([
          403,
          "forbidden"
        ])
        expect(status(yield* send(`${base}/v1/threads/mine`, "DELETE", undefined, browser))).toStrictEqual([
          403,
          "forbidden"
        ])
        const durable = yield* call(`${base}/v1/stream/notes`, {
          method: "PUT",
          headers: { ...browser, "content-type": "text/plain" }
        })
        expect(durable.status).toBe(403)
        // its own thread: it starts turns and reads them, by header or ?access_token=
        expect((yield* send(`${base}/v1/threads/mine/turns`, "POST", say("Mine"), browser)).status).toBe(200)
        const mine = yield* settled(base, "mine", browser)
        expect((yield* send(`${base}/v1/turns/${mine.head}`, "GET", undefined, browser)).status).toBe(200)
        expect((yield* call(`${base}/v1/threads/mine?access_token=${token}`)).status).toBe(200)
        // a read token does not start turns
        const reader = bearer(yield* ThreadToken.mint({ key, threadId: "mine", scope: "read", expiresIn: "1 hour" }))
        expect(status(yield* send(`${base}/v1/threads/mine/turns`, "POST", say("No"), reader))).toStrictEqual([
          403,
          "forbidden"
        ])
      }).pipe(Effect.provide(services)),
    60_000
  )

  it.effect("429 with Retry-After past a thread token's turns a minute", () =>
    Effect.gen(function*() {
      const base = yield* serveThreads([], [], { threadTurnsPerMinute: 2 })
      const browser = bearer(yield* ThreadToken.mint({ key, threadId: "busy", expiresIn: "1 hour" }))
      for (const text of ["a", "b"]) {
        expect((yield* send(`${base}/v1/threads/busy/turns`, "POST", say(text), browser)).status).toBe(200)
        yield* settled(base, "busy", browser)
      }
      const limited = yield* send(`${base}/v1/threads/busy/turns`, "POST", say("c"), browser)
      expect(limited.status).toBe(429)
      expect(limited.json.error.code).toBe("rate_limited")
      const retryAfter = Number(limited.headers.get("retry-after"))
      expect(retryAfter).toBeGreaterThanOrEqual(1)
      expect(retryAfter).toBeLessThanOrEqual(60)
      // a bearer token is not limited so
      expect((yield* send(`${base}/v1/threads/busy/turns`, "POST", say("d"))).status).toBe(200)
    }).pipe(Effect.provide(services)), 60_000)

  it.effect(
    "the turns window is the thread's: a token minted again shares it; a refused body takes none",
    () =>
      Effect.gen(function*() {
        const base = yield* serveThreads([], [], { threadTurnsPerMinute: 2 })
        const mint = (hours: number) =>
          Effect.map(ThreadToken.mint({ key, threadId: "keyed", expiresIn: hours * 3_600_000 }), bearer)
        const first = yield* mint(1)
        // bad bodies and a refused model: no quota taken (was: each one a turn of the window)
        for (let i = 0; i < 3; i++) {
          expect((yield* send(`${base}/v1/threads/keyed/turns`, "POST", {}, first)).status).toBe(400)
        }
        expect((yield* send(`${base}/v1/threads/keyed/turns`, "POST", { ...say("x"), model: "gpt-9" }, first)).status)
          .toBe(400)
        expect((yield* send(`${base}/v1/threads/keyed/turns`, "POST", say("a"), first)).status).toBe(200)
        yield* settled(base, "keyed", first)
        // a fresh token of the same thread (as the chat transport mints on expiry): the same window
        const second = yield* mint(2)
        expect((yield* send(`${base}/v1/threads/keyed/turns`, "POST", say("b"), second)).status).toBe(200)
        yield* settled(base, "keyed", second)
        const third = yield* mint(3)
        const limited = yield* send(`${base}/v1/threads/keyed/turns`, "POST", say("c"), third)
        expect([limited.status, limited.json.error.code]).toStrictEqual([429, "rate_limited"])
      }).pipe(Effect.provide(services)),
    60_000
  )

  it.effect(
    "a refused first turn leaves no thread; a regeneration with tool results is refused naming regenerate",
    () =>
      Effect.gen(function*() {
        const asked: Array<ThreadStarter.ThreadTurn> = []
        const base = yield* serveThreads([], asked)
        const refusal = (answered: Answered) => [answered.status, answered.json.error.code, answered.json.error.field]
        const results = { toolResults: [{ toolCallId: "c1", output: "x" }] }
        expect(refusal(yield* send(`${base}/v1/threads/never/turns`, "POST", results)))
          .toStrictEqual([400, "invalid_request", "toolResults"])
        expect(refusal(yield* send(`${base}/v1/threads/never/turns`, "POST", { ...say("x"), model: "gpt-9" })))
          .toStrictEqual([400, "invalid_request", "model"])
        // (was: 200 with an empty thread left behind)
        expect(refusal(yield* send(`${base}/v1/threads/never`, "GET"))).toStrictEqual([
          404,
          "thread_not_found",
          undefined
        ])
        expect((yield* send(`${base}/v1/threads/regen/turns`, "POST", say("Hi"))).status).toBe(200)
        yield* settled(base, "regen")
        // (was: 200, the results silently dropped)
        expect(refusal(yield* send(`${base}/v1/threads/regen/turns`, "POST", { regenerate: true, ...results })))
          .toStrictEqual([400, "invalid_request", "regenerate"])
        const empty = {
          message: { id: "f", role: "user", parts: [{ type: "file", mediaType: "image/png", url: "x" }] }
        }
        expect(refusal(yield* send(`${base}/v1/threads/regen/turns`, "POST", empty)))
          .toStrictEqual([400, "invalid_request", "message.parts"])
        expect(asked.length).toBe(1)
      }).pipe(Effect.provide(services)),
    60_000
  )

  it.effect("a bad body is a JSON error naming the field, never a schema dump", () =>
    Effect.gen(function*() {
      const base = yield* serveThreads()
      const refusal = (answered: Answered) => [answered.status, answered.json.error.code, answered.json.error.field]
      const badText = { message: { id: "u", role: "user", parts: [{ type: "text", text: 7 }] } }
      expect(refusal(yield* send(`${base}/v1/threads/t/turns`, "POST", badText)))
        .toStrictEqual([400, "invalid_request", "message.parts[0].text"])
      expect(refusal(yield* send(`${base}/v1/threads/t/turns`, "POST", {}))).toStrictEqual([
        400,
        "invalid_request",
        "message"
      ])
      expect(refusal(yield* send(`${base}/v1/threads/t/turns`, "POST", { ...say("x"), model: "gpt-9" })))
        .toStrictEqual([400, "invalid_request", "model"])
      expect(refusal(yield* send(`${base}/v1/threads/t/turns`, "POST", "{\"message\":"))).toStrictEqual([
        400,
        "invalid_request",
        undefined
      ])
      const badId = yield* send(`${base}/v1/threads/${"x".repeat(200)}/turns`, "POST", say("x"))
      expect([badId.status, badId.json.error.code]).toStrictEqual([400, "invalid_thread_id"])
      const missing = yield* send(`${base}/v1/threads/nobody`, "GET")
      expect([missing.status, missing.json.error.code]).toStrictEqual([404, "thread_not_found"])
    }).pipe(Effect.provide(services)), 60_000)

  it.effect("DELETE removes the thread and its turns' streams", () =>
    Effect.gen(function*() {
      const base = yield* serveThreads()
      yield* send(`${base}/v1/threads/gone/turns`, "POST", say("Bye"))
      const thread = yield* settled(base, "gone")
      const redis = yield* RedisStreams.RedisStreams
      expect((yield* redis.xrange(TurnKeys.eventsKey(prefix, thread.head), "-", "+")).length).toBeGreaterThan(0)
      const deleted = yield* send(`${base}/v1/threads/gone`, "DELETE")
      expect([deleted.status, deleted.json]).toStrictEqual([200, { threadId: "gone", deleted: true }])
      expect((yield* send(`${base}/v1/threads/gone`, "GET")).status).toBe(404)
      expect((yield* redis.xrange(TurnKeys.eventsKey(prefix, thread.head), "-", "+")).length).toBe(0)
      expect((yield* redis.xrange(TurnKeys.upsertsKey(prefix, thread.head), "-", "+")).length).toBe(0)
    }).pipe(Effect.provide(services)), 60_000)

  it.effect(
    "ThreadExists is 409 thread_exists (was turn_running); ThreadDeleted is 404 thread_not_found",
    () =>
      Effect.gen(function*() {
        const exists = yield* Effect.flip(fromThreadError(new ThreadError.ThreadExists({ threadId: "x" })))
        expect([exists.code, statusOf(exists.code)]).toStrictEqual(["thread_exists", 409])
        const deleted = yield* Effect.flip(fromThreadError(new ThreadError.ThreadDeleted({ threadId: "x" })))
        expect([deleted.code, statusOf(deleted.code)]).toStrictEqual(["thread_not_found", 404])
      }),
    10_000
  )

  it.effect("a turn's end after its thread's deletion is expected: no error logged", () =>
    Effect.gen(function*() {
      const levels: Array<string> = []
      const logger = Logger.make<unknown, void>(({ logLevel }) => {
        levels.push(logLevel)
      })
      const threads = yield* Threads.Threads
      const { threadId } = yield* threads.create()
      const turn = yield* threads.beginTurn(threadId, { message: { role: "user", content: "x" } })
      yield* threads.delete(threadId)
      yield* recordEnd(threads, threadId, turn.turnId, { status: "completed", items: [] }).pipe(
        Effect.provideService(Logger.CurrentLoggers, new Set([logger]))
      )
      // (was: one Error line)
      expect(levels.filter((level) => level === "Error" || level === "Warn")).toStrictEqual([])
    }).pipe(Effect.provide(services)), 60_000)

  it.effect("the events SSE resumes after Last-Event-ID", () =>
    Effect.gen(function*() {
      const base = yield* serveThreads()
      yield* send(`${base}/v1/threads/ev/turns`, "POST", say("One"))
      yield* settled(base, "ev")
      const opened = yield* open(`${base}/v1/threads/ev/events`, writer)
      expect(opened.status).toBe(200)
      const pull = yield* Stream.toPull(opened.events)
      const first = yield* takeEvents(pull, 3)
      expect(first.map((event) => event.event)).toStrictEqual(["thread_created", "turn_started", "turn_ended"])
      const resumed = yield* open(`${base}/v1/threads/ev/events`, { ...writer, "last-event-id": first[1]!.id! })
      const rest = yield* Stream.toPull(resumed.events)
      yield* send(`${base}/v1/threads/ev/turns`, "POST", say("Two"))
      const after = yield* takeEvents(rest, 3)
      expect(after.map((event) => event.event)).toStrictEqual(["turn_ended", "turn_started", "turn_ended"])
      expect(after[0]!.id).toBe(first[2]!.id)
      expect(JSON.parse(after[1]!.data).input.message.parts[0].text).toBe("Two")
    }).pipe(Effect.scoped, Effect.provide(services)), 60_000)
})
