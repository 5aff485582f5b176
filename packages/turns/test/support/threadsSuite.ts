/**
 * The `Threads` service, run on every `RedisStreams` layer: records, one running turn,
 * branches, the history round trip through the providers' request encoders, events,
 * deletion and a thread's size.
 */
import { describe, expect, layer } from "@effect/vitest"
import type { OutputItem } from "@sluice/core"
import * as AnthropicRequest from "@sluice/providers/AnthropicRequest"
import * as OpenAiResponsesRequest from "@sluice/providers/OpenAiResponsesRequest"
import { RedisStreams } from "@sluice/redis/RedisStreams"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import * as ThreadKeys from "../../src/ThreadKeys.js"
import type * as ThreadLog from "../../src/ThreadLog.js"
import * as Threads from "../../src/Threads.js"
import * as TurnKeys from "../../src/TurnKeys.js"

const prefix = `threads-test-${randomUUID().slice(0, 8)}`

const said = (text: string): ThreadLog.TurnEnd => ({
  status: "completed",
  provider: "anthropic",
  items: [{ type: "message", id: "m1", content: text, origin: "agent" }]
})

// A turn that reasoned (signed), called a tool, and left the call to the client.
const toolTurn: ReadonlyArray<OutputItem.OutputItem> = [
  { type: "reasoning", id: "r1", content: "think", signature: "sig-abc" },
  { type: "function_call", id: "item-call-1", call_id: "toolu_01", name: "weather", arguments: "{\"city\":\"Oslo\"}" }
]

const logBytes = (threadId: string) =>
  RedisStreams.use((redis) =>
    Effect.map(
      redis.xrange(ThreadKeys.logKey(prefix, threadId), "-", "+"),
      (entries) =>
        entries.reduce((sum, entry) => sum + entry.fields.reduce((n, [k, v]) => n + k.length + v.length, 0), 0)
    )
  )

export const threadsSuite = (name: string, streams: Layer.Layer<RedisStreams, unknown>) =>
  layer(Layer.provideMerge(Threads.layer({ prefix }), streams), { timeout: 60_000 })(name, (it) => {
    describe("records", () => {
      it.effect("create, get; a second create, an unknown thread and a bad id are typed errors", () =>
        Effect.gen(function*() {
          const threads = yield* Threads.Threads
          const created = yield* threads.create()
          expect(yield* threads.get(created.threadId)).toMatchObject({ head: null, turnCount: 0 })
          expect(Option.isNone(created.running)).toBe(true)
          const again = yield* Effect.flip(threads.create(created.threadId))
          expect(again).toMatchObject({ _tag: "ThreadExists", threadId: created.threadId })
          expect(yield* Effect.flip(threads.get("nope"))).toMatchObject({ _tag: "ThreadNotFound", threadId: "nope" })
          expect(yield* Effect.flip(threads.get("a{b}"))).toMatchObject({
            _tag: "InvalidThreadInput",
            field: "threadId"
          })
        }))
    })

    describe("one running turn", () => {
      it.effect("a second begin fails with TurnRunning naming the running turn; five at once start exactly one", () =>
        Effect.gen(function*() {
          const threads = yield* Threads.Threads
          const { threadId } = yield* threads.create()
          const first = yield* threads.beginTurn(threadId, { message: { role: "user", content: "hi" } })
          const second = yield* Effect.flip(
            threads.beginTurn(threadId, { message: { role: "user", content: "again" } })
          )
          expect(second).toMatchObject({ _tag: "TurnRunning", threadId, turnId: first.turnId })
          yield* threads.endTurn(threadId, first.turnId, said("hello"))
          expect(yield* Effect.flip(threads.endTurn(threadId, first.turnId, said("x")))).toMatchObject({
            _tag: "TurnNotRunning"
          })
          const results = yield* Effect.all(
            Array.from(
              { length: 5 },
              (_, i) => Effect.result(threads.beginTurn(threadId, { message: { role: "user", content: `racer ${i}` } }))
            ),
            { concurrency: "unbounded" }
          )
          const won = results.filter((result) => result._tag === "Success")
          expect(won.length).toBe(1)
          expect(results.filter((result) => result._tag === "Failure").map((result) => result.failure._tag))
            .toStrictEqual(
              ["TurnRunning", "TurnRunning", "TurnRunning", "TurnRunning"]
            )
          expect(Option.map((yield* threads.get(threadId)).running, (running) => running.turnId)).toStrictEqual(
            Option.some(won[0]!.success.turnId)
          )
        }))

      it.effect("an empty input, a non-user message and a result for no call are InvalidThreadInput naming the field", () =>
        Effect.gen(function*() {
          const threads = yield* Threads.Threads
          const { threadId } = yield* threads.create()
          expect(yield* Effect.flip(threads.beginTurn(threadId, {}))).toMatchObject({ field: "message" })
          expect(
            yield* Effect.flip(threads.beginTurn(threadId, { message: { id: "a", role: "assistant", parts: [] } }))
          ).toMatchObject({ _tag: "InvalidThreadInput", field: "message.role" })
          const turn = yield* threads.beginTurn(threadId, { message: { role: "user", content: "weather?" } })
          yield* threads.endTurn(threadId, turn.turnId, { status: "completed", provider: "anthropic", items: toolTurn })
          const bad = yield* Effect.flip(
            threads.beginTurn(threadId, { toolResults: [{ toolCallId: "nope", output: "x" }] })
          )
          expect(bad).toMatchObject({ _tag: "InvalidThreadInput", field: "toolResults" })
          expect(bad.message).toContain("nope")
        }))
    })

    describe("history", () => {
      it.effect("round trip: the next request keeps the reasoning signature and the tool result (Anthropic encoder)", () =>
        Effect.gen(function*() {
          const threads = yield* Threads.Threads
          const { threadId } = yield* threads.create()
          const turn = yield* threads.beginTurn(threadId, { message: { role: "user", content: "weather in Oslo?" } })
          expect(turn.messages).toStrictEqual([{ _tag: "user", text: "weather in Oslo?" }])
          yield* threads.endTurn(threadId, turn.turnId, { status: "completed", provider: "anthropic", items: toolTurn })
          // the client answers the call by the id its UI message shows (the item id)
          const next = yield* threads.beginTurn(threadId, {
            toolResults: [{ toolCallId: "item-call-1", output: { temperature: 3 } }]
          })
          // the result stored under the provider's call id, and the call as the client named it
          expect((yield* threads.turn(threadId, next.turnId)).input).toMatchObject({
            toolResults: [{ callId: "toolu_01" }],
            toolCallIds: ["item-call-1"]
          })
          const encoded = AnthropicRequest.messages({ model: "claude", messages: next.messages })
          expect(encoded).toStrictEqual([
            { role: "user", content: [{ type: "text", text: "weather in Oslo?" }] },
            {
              role: "assistant",
              content: [
                { type: "thinking", thinking: "think", signature: "sig-abc" },
                { type: "tool_use", id: "toolu_01", name: "weather", input: { city: "Oslo" } }
              ]
            },
            {
              role: "user",
              content: [{ type: "tool_result", tool_use_id: "toolu_01", content: "{\"temperature\":3}" }]
            }
          ])
          yield* threads.endTurn(threadId, next.turnId, said("3 degrees"))
          // history gives the same conversation, the last answer after it
          const history = yield* threads.history(threadId)
          expect(history.map((message) => message._tag)).toStrictEqual(["user", "assistant", "tool", "assistant"])
          const ui = yield* threads.uiMessages(threadId)
          expect(ui.map((message) => message.role)).toStrictEqual(["user", "assistant", "assistant"])
          expect(ui[1]!.parts).toContainEqual({
            type: "tool-weather",
            toolCallId: "item-call-1",
            state: "output-available",
            input: { city: "Oslo" },
            output: { temperature: 3 }
          })
        }))

      it.effect("OpenAI Responses reasoning keeps its encrypted content and item id in the next request", () =>
        Effect.gen(function*() {
          const threads = yield* Threads.Threads
          const { threadId } = yield* threads.create()
          const turn = yield* threads.beginTurn(threadId, { message: { role: "user", content: "q" } })
          yield* threads.endTurn(threadId, turn.turnId, {
            status: "completed",
            provider: "openai-responses",
            items: [
              {
                type: "reasoning",
                id: "rs_1",
                content: "",
                provider_id: "openai-responses",
                encrypted_content: "enc-xyz"
              },
              { type: "message", id: "msg_1", content: "a", origin: "agent" }
            ]
          })
          const next = yield* threads.beginTurn(threadId, { message: { role: "user", content: "q2" } })
          const input = OpenAiResponsesRequest.input({ model: "gpt", messages: next.messages })
          expect(input).toContainEqual(
            expect.objectContaining({ type: "reasoning", id: "rs_1", encrypted_content: "enc-xyz" })
          )
          expect(input.at(-1)).toMatchObject({ role: "user" })
        }))
    })

    describe("branches", () => {
      it.effect("regenerate and an edited message make branches; the old turns stay readable and are superseded", () =>
        Effect.gen(function*() {
          const threads = yield* Threads.Threads
          const { threadId } = yield* threads.create()
          const one = yield* threads.beginTurn(threadId, { message: { role: "user", content: "one" } })
          yield* threads.endTurn(threadId, one.turnId, said("first answer"))
          const two = yield* threads.beginTurn(threadId, { message: { role: "user", content: "two" } })
          yield* threads.endTurn(threadId, two.turnId, said("second answer"))
          const again = yield* threads.regenerate(threadId)
          expect([again.parentId, again.superseded]).toStrictEqual([one.turnId, [two.turnId]])
          expect(again.messages.at(-1)).toStrictEqual({ _tag: "user", text: "two" })
          yield* threads.endTurn(threadId, again.turnId, said("second answer, again"))
          const edited = yield* threads.beginTurn(threadId, { message: { role: "user", content: "ONE" } }, {
            replaces: one.turnId
          })
          expect([edited.parentId, edited.superseded]).toStrictEqual([null, [one.turnId, again.turnId]])
          yield* threads.endTurn(threadId, edited.turnId, said("edited answer"))
          const turns = yield* threads.turns(threadId)
          expect(turns.map((turn) => [turn.turnId, turn.onPath])).toStrictEqual([
            [one.turnId, false],
            [two.turnId, false],
            [again.turnId, false],
            [edited.turnId, true]
          ])
          expect(turns[0]!.children).toStrictEqual([two.turnId, again.turnId])
          expect((yield* threads.turn(threadId, two.turnId)).end).toStrictEqual(Option.some(said("second answer")))
          expect(yield* threads.history(threadId)).toStrictEqual([
            { _tag: "user", text: "ONE" },
            { _tag: "assistant", parts: [{ _tag: "text", text: "edited answer", provider: "anthropic" }] }
          ])
          const events = yield* Stream.runCollect(Stream.take(threads.events(threadId), 9))
          expect(events.map((entry) => entry.event.type)).toStrictEqual([
            "thread_created",
            "turn_started",
            "turn_ended",
            "turn_started",
            "turn_ended",
            "turn_started",
            "turns_superseded",
            "turn_ended",
            "turn_started"
          ])
          // a follower resumes after an id
          const after = yield* Stream.runCollect(Stream.take(threads.events(threadId, events[7]!.id), 1))
          expect(after.map((entry) => entry.id)).toStrictEqual([events[8]!.id])
        }))
    })

    describe("a first turn creates its thread", () => {
      it.effect("beginTurn with create makes the thread; a refused first turn leaves none behind", () =>
        Effect.gen(function*() {
          const threads = yield* Threads.Threads
          const redis = yield* RedisStreams
          const refused = `first-${randomUUID()}`
          const results = { toolResults: [{ toolCallId: "c1", output: "x" }] }
          expect(yield* Effect.flip(threads.beginTurn(refused, results, { create: true }))).toMatchObject({
            _tag: "InvalidThreadInput",
            field: "toolResults"
          })
          expect(yield* Effect.flip(threads.regenerate(refused))).toMatchObject({ _tag: "ThreadNotFound" })
          expect(yield* redis.xlen(ThreadKeys.logKey(prefix, refused))).toBe(0)
          const threadId = `first-${randomUUID()}`
          const begun = yield* threads.beginTurn(threadId, { message: { role: "user", content: "hi" } }, {
            create: true
          })
          expect(yield* threads.get(threadId)).toMatchObject({ head: begun.turnId, turnCount: 1 })
        }))

      it.effect("regenerate on a thread with no turn names regenerate, not an empty turn id", () =>
        Effect.gen(function*() {
          const threads = yield* Threads.Threads
          const { threadId } = yield* threads.create()
          expect(yield* Effect.flip(threads.regenerate(threadId))).toMatchObject({
            _tag: "InvalidThreadInput",
            field: "regenerate",
            reason: "the thread has no turn to run again"
          })
        }))

      it.effect("snapshot gives the thread and its messages from one read", () =>
        Effect.gen(function*() {
          const threads = yield* Threads.Threads
          const { threadId } = yield* threads.create()
          const turn = yield* threads.beginTurn(threadId, { message: { role: "user", content: "q" } })
          const { info, messages } = yield* threads.snapshot(threadId)
          expect(Option.map(info.running, (running) => running.turnId)).toStrictEqual(Option.some(turn.turnId))
          expect(messages.map((message) => message.role)).toStrictEqual(["user"])
        }))
    })

    describe("deletion and size", () => {
      it.effect("delete removes the thread and its turns' streams; the thread is then not found", () =>
        Effect.gen(function*() {
          const threads = yield* Threads.Threads
          const redis = yield* RedisStreams
          const { threadId } = yield* threads.create()
          const turn = yield* threads.beginTurn(threadId, { message: { role: "user", content: "x" } })
          yield* redis.xadd(TurnKeys.eventsKey(prefix, turn.turnId), { id: "*", fields: [["a", "b"]] })
          yield* threads.endTurn(threadId, turn.turnId, said("y"))
          yield* threads.delete(threadId)
          expect(yield* redis.xlen(TurnKeys.eventsKey(prefix, turn.turnId))).toBe(0)
          expect(yield* Effect.flip(threads.get(threadId))).toMatchObject({ _tag: "ThreadNotFound" })
          // the log is kept a short grace, so a follower still reads the deletion
          const ttl = yield* redis.pttl(ThreadKeys.logKey(prefix, threadId))
          expect(ttl > 0 && ttl <= Threads.deletedLogGraceMs).toBe(true)
          const events = yield* Stream.runCollect(threads.events(threadId).pipe(Stream.catch(() => Stream.empty)))
          expect(events).toStrictEqual([])
          const log = yield* redis.xrange(ThreadKeys.logKey(prefix, threadId), "-", "+")
          expect(log.at(-1)?.fields).toContainEqual(["type", "thread_deleted"])
        }))

      it.effect("delete ends the running turn cancelled in the same write; the id is not created again", () =>
        Effect.gen(function*() {
          const threads = yield* Threads.Threads
          const redis = yield* RedisStreams
          const { threadId } = yield* threads.create()
          const turn = yield* threads.beginTurn(threadId, { message: { role: "user", content: "x" } })
          const following = yield* Deferred.make<void>()
          const follower = yield* Effect.forkChild(
            Stream.runCollect(threads.events(threadId).pipe(Stream.tap(() => Deferred.succeed(following, undefined))))
          )
          yield* Deferred.await(following)
          yield* threads.delete(threadId)
          const read = (yield* Fiber.join(follower)).map((entry) => entry.event)
          expect(read.map((event) => event.type)).toStrictEqual([
            "thread_created",
            "turn_started",
            "turn_ended",
            "thread_deleted"
          ])
          expect(read[2]).toMatchObject({
            turnId: turn.turnId,
            end: { status: "cancelled", error: { code: "thread_deleted" } }
          })
          // the running turn's streams are kept for the grace (its producer may still write)
          expect(yield* redis.pttl(TurnKeys.eventsKey(prefix, turn.turnId))).not.toBe(0)
          expect(yield* Effect.flip(threads.create(threadId))).toMatchObject({ _tag: "ThreadDeleted", threadId })
          expect(
            yield* Effect.flip(
              threads.beginTurn(threadId, { message: { role: "user", content: "y" } }, { create: true })
            )
          ).toMatchObject({ _tag: "ThreadNotFound" })
          // the log gone too (its grace over): still refused, by the tombstone
          yield* redis.pexpire(ThreadKeys.logKey(prefix, threadId), 0)
          expect(
            yield* Effect.flip(
              threads.beginTurn(threadId, { message: { role: "user", content: "y" } }, { create: true })
            )
          ).toMatchObject({ _tag: "ThreadDeleted" })
        }))

      it.effect("100 turns: the log holds two entries a turn, each turn's bytes the same; its expiry is renewed", () =>
        Effect.gen(function*() {
          const threads = yield* Threads.Threads
          const redis = yield* RedisStreams
          const { threadId } = yield* threads.create()
          const growth: Array<number> = []
          let before = yield* logBytes(threadId)
          for (let i = 0; i < 100; i++) {
            const turn = yield* threads.beginTurn(threadId, { message: { role: "user", content: "question" } })
            yield* threads.endTurn(threadId, turn.turnId, said("the answer"))
            const now = yield* logBytes(threadId)
            growth.push(now - before)
            before = now
          }
          expect(yield* redis.xlen(ThreadKeys.logKey(prefix, threadId))).toBe(1 + 2 * 100)
          // every turn after the first (whose parent is null, not an id) adds the same bytes: linear, not quadratic
          const later = growth.slice(1)
          expect(Math.max(...later) - Math.min(...later)).toBe(0)
          const ttl = yield* redis.pttl(ThreadKeys.logKey(prefix, threadId))
          expect(ttl > 0 && ttl <= Threads.defaultRetentionMs).toBe(true)
          expect((yield* threads.history(threadId)).length).toBe(200)
        }))
    })
  })
