/**
 * A thread's turn on a real `sluice serve` process that dies, on redis-server, against a
 * loopback Anthropic (docs/threads.md#faults):
 *
 * - killed with SIGKILL mid-turn (the provider had said "Partly sunny" and then
 *   nothing): a second server on the same Redis ends the turn `producer_lost` once its
 *   lease lapses, `GET /v1/threads/:id` shows it ended with the partial answer, and the
 *   next `POST` on the thread starts a turn whose request carries that partial answer;
 * - stopped with SIGTERM while the provider stalls: the thread records the turn
 *   `cancelled` with the code `aborted`, and after a restart the slot is free.
 *
 * (Before the fix, the killed turn's thread answered 409 `turn_running` for good.)
 */
import { describe, expect, it } from "@effect/vitest"
import { RedisStreams, RedisStreamsLive } from "@sluice/redis"
import * as Loopback from "@sluice/testing/providers"
import type {} from "@sluice/testing/redis/globalSetup"
import { serveProcess } from "@sluice/testing/serve"
import { ThreadKeys, ThreadLog } from "@sluice/turns"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { randomUUID } from "node:crypto"
import { inject } from "vitest"

const redisUrl = inject("redisUrl")

const sse = (events: ReadonlyArray<readonly [string, unknown]>) =>
  events.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join("")

const answer = (id: string, texts: ReadonlyArray<string>, done: boolean) =>
  sse([
    ["message_start", {
      type: "message_start",
      message: {
        id,
        type: "message",
        role: "assistant",
        model: "claude-sonnet-4-5",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 1 }
      }
    }],
    ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
    ...texts.map((text) =>
      ["content_block_delta", {
        type: "content_block_delta",
        index: 0,
        delta: { type: "text_delta", text }
      }] as const
    ),
    ...(done
      ? [
        ["content_block_stop", { type: "content_block_stop", index: 0 }] as const,
        ["message_delta", {
          type: "message_delta",
          delta: { stop_reason: "end_turn", stop_sequence: null },
          usage: { output_tokens: 5 }
        }] as const,
        ["message_stop", { type: "message_stop" }] as const
      ]
      : [])
  ])

// the first answer stops after its two deltas (4 events) and hangs; the next is whole
const cut = answer("msg_cut", ["Partly ", "sunny"], false)
const whole = answer("msg_whole", ["Yes, take one."], true)

/** The RedisStreams of `url`, for the length of the scope. */
const redisAt = (url: string) =>
  Effect.map(
    Layer.build(RedisStreamsLive.layer({ url })),
    (context) => Context.get(context, RedisStreams.RedisStreams)
  )

const serve = (provider: string, prefix: string) =>
  serveProcess(
    {
      SLUICE_REDIS_URL: redisUrl,
      ANTHROPIC_API_KEY: "test-key",
      ANTHROPIC_BASE_URL: provider,
      // a busy test machine runs its timers late: no turn here is refused for it
      SLUICE_MAX_LAG_MS: "600000"
    },
    "--insecure-local",
    "--prefix",
    prefix,
    "--thread-providers",
    "anthropic",
    "--thread-models",
    "claude-sonnet-4-5"
  )

const post = (base: string, threadId: string, body: unknown) =>
  Effect.promise(() =>
    fetch(`${base}/v1/threads/${threadId}/turns`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body)
    })
  )

interface ThreadJson {
  readonly running: unknown
  readonly turnCount: number
  readonly messages: ReadonlyArray<
    { readonly role: string; readonly parts: ReadonlyArray<{ readonly type: string; readonly text?: string }> }
  >
}

const getThread = (base: string, threadId: string) =>
  Effect.promise(async () => {
    const response = await fetch(`${base}/v1/threads/${threadId}`)
    return { status: response.status, body: (await response.json()) as ThreadJson }
  })

/** Looks again every 100 ms (at most 600 times) until `done` holds: counts, never a duration. */
const until = <A, E>(look: Effect.Effect<A, E>, done: (a: A) => boolean, what: string) =>
  Effect.gen(function*() {
    for (let round = 0; round < 600; round++) {
      const seen = yield* look
      if (done(seen)) return seen
      yield* Effect.sleep(Duration.millis(100))
    }
    return yield* Effect.die(new Error(`never saw ${what}`))
  })

/** The thread's turn_ended events, from its log in Redis. */
const endsOf = (redis: RedisStreams.RedisStreamsService, prefix: string, threadId: string) =>
  Effect.map(
    redis.xrange(ThreadKeys.logKey(prefix, threadId), "-", "+"),
    (entries) =>
      entries.flatMap((entry) => {
        const event = ThreadLog.toEvent(entry)
        return Option.isSome(event) && event.value.type === "turn_ended" ? [event.value] : []
      })
  )

const userText = (text: string) => ({ message: { role: "user", content: text } })

/**
 * A thread's first turn on a first server whose provider said "Partly sunny" and stalls
 * (its next request gets a whole answer).
 */
const turnOnFirstServer = Effect.gen(function*() {
  const prefix = `sluice-thread-faults-${randomUUID().slice(0, 8)}`
  const threadId = `chat-${randomUUID().slice(0, 8)}`
  const redis = yield* redisAt(redisUrl)
  const provider = yield* Loopback.serve([{ _tag: "hang", body: cut, events: 4 }, { _tag: "sse", body: whole }])
  const first = yield* serve(provider.url, prefix)
  const started = yield* post(first.base, threadId, userText("Umbrella in Florence?"))
  expect(started.status).toBe(200)
  const turnId = started.headers.get("x-sluice-turn-id")!
  yield* provider.hungWritten
  return { first, prefix, provider, redis, started, threadId, turnId }
})

describe("threads on sluice serve, under faults", () => {
  it.live(
    "killed (SIGKILL) mid-turn: another server ends the turn producer_lost, the thread keeps the partial answer and takes the next turn",
    () =>
      Effect.gen(function*() {
        const { first, prefix, provider, redis, threadId, turnId } = yield* turnOnFirstServer
        // the partial answer is in Stream A before the process dies
        yield* until(
          Effect.map(
            redis.xrange(`${prefix}:turn:{${turnId}}:events`, "-", "+"),
            (entries) => entries.map((entry) => entry.fields.map(([, v]) => v).join(" ")).join("\n")
          ),
          (text) => text.includes("sunny"),
          "the second delta in Stream A"
        )
        yield* first.kill("SIGKILL")
        expect(yield* first.exited).toBe("SIGKILL")

        const second = yield* serve(provider.url, prefix)
        // once it lapses, the turn is ended producer_lost, in its streams and in the thread
        const ended = yield* until(getThread(second.base, threadId), (thread) =>
          thread.body.running === null, "the turn end")
        expect(ended.body.turnCount).toBe(1)
        const assistant = ended.body.messages.at(-1)!
        expect(assistant.role).toBe("assistant")
        expect(
          assistant.parts.filter((part) =>
            part.type === "text"
          ).map((part) => part.text)
        ).toStrictEqual([
          "Partly sunny"
        ])
        const ends = yield* endsOf(redis, prefix, threadId)
        expect(ends.map((end) => [end.turnId, end.end.status])).toStrictEqual([[turnId, "producer_lost"]])

        // the next turn starts, and the provider is sent the partial answer
        const next = yield* post(second.base, threadId, userText("So, take one?"))
        expect(next.status).toBe(200)
        expect((yield* Effect.promise(() => next.text())).trimEnd().endsWith("data: [DONE]")).toBe(true)
        const request = provider.requests()[1]!.body as {
          readonly messages: ReadonlyArray<{ readonly role: string; readonly content: unknown }>
        }
        expect(request.messages.map((message) => message.role)).toStrictEqual(["user", "assistant", "user"])
        expect(JSON.stringify(request.messages[1]!.content)).toContain("Partly sunny")
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "stopped (SIGTERM) while its provider stalls: the thread records the turn cancelled (aborted); after a restart the slot is free",
    () =>
      Effect.gen(function*() {
        const { first, prefix, provider, redis, started, threadId, turnId } = yield* turnOnFirstServer
        const body = yield* Effect.forkChild(Effect.promise(() => started.text()))
        yield* first.kill("SIGTERM")
        expect(yield* first.exited).toBe(143)
        yield* Fiber.await(body)
        const ends = yield* endsOf(redis, prefix, threadId)
        expect(ends.map((end) => [end.turnId, end.end.status, end.end.error?.code])).toStrictEqual([
          [turnId, "cancelled", "aborted"]
        ])

        const second = yield* serve(provider.url, prefix)
        const thread = yield* getThread(second.base, threadId)
        expect(thread.body.running).toBeNull()
        const next = yield* post(second.base, threadId, userText("So, take one?"))
        expect(next.status).toBe(200)
        expect((yield* Effect.promise(() => next.text())).trimEnd().endsWith("data: [DONE]")).toBe(true)
        // the second turn's end is recorded after its answer's last byte
        const both = yield* until(endsOf(redis, prefix, threadId), (all) => all.length === 2, "the second end")
        expect(both.map((end) => end.end.status)).toStrictEqual(["cancelled", "completed"])
      }).pipe(Effect.scoped),
    120_000
  )
})
