/**
 * Threads on `sluice serve` (docs/threads.md#http), with a loopback stand-in of
 * Anthropic's Messages API replaying recorded streams: a browser holding only a thread
 * token minted by `sluice token` sends only what is new (a message, then the results of
 * the tool calls the first turn made, then a message), and the provider receives the
 * thread's whole history on the third turn: the user's messages, the assistant's
 * thinking with its signature and its redacted thinking, its tool calls and their
 * results. The server's policy refuses a model or a tool it does not allow, naming the
 * field; `sluice token` prints the token alone.
 */
import { describe, expect, it } from "@effect/vitest"
import { transcript } from "@sluice/testing/fixtures"
import * as Loopback from "@sluice/testing/providers"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { serving } from "./support/serving.js"
import { sluice } from "./support/sluice.js"

const thinking = transcript("anthropic/thinking-tools.sse")
const text = transcript("anthropic-text.sse")
const apiToken = "threads-serve-token-0123456789"

const toolsFile = () => {
  const path = join(mkdtempSync(join(tmpdir(), "sluice-threads-")), "tools.json")
  const schema = { type: "object", properties: { city: { type: "string" } } }
  writeFileSync(
    path,
    JSON.stringify(["weather", "local_time", "ping"].map((name) => ({ name, description: name, parameters: schema })))
  )
  return path
}

const post = (base: string, threadId: string, token: string, body: unknown) =>
  Effect.promise(async () => {
    const response = await fetch(`${base}/v1/threads/${threadId}/turns`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    return { status: response.status, turnId: response.headers.get("x-sluice-turn-id"), text: await response.text() }
  })

const ThreadJson = Schema.Struct({
  running: Schema.NullOr(Schema.Struct({ turnId: Schema.String })),
  turnCount: Schema.Number,
  lastEventId: Schema.String
})
const decodeThread = Schema.decodeUnknownPromise(ThreadJson)
const decodeEvent = Schema.decodeUnknownOption(
  Schema.fromJsonString(Schema.Struct({ type: Schema.String, turnId: Schema.optionalKey(Schema.String) }))
)

const getThread = async (base: string, threadId: string, token: string) => {
  const response = await fetch(`${base}/v1/threads/${threadId}`, { headers: { authorization: `Bearer ${token}` } })
  expect(response.status).toBe(200)
  return decodeThread(await response.json())
}

/**
 * Waits until the thread runs no turn: its running turn's `turn_ended` read from the
 * thread's events (`GET /v1/threads/:threadId/events` after the thread's last event; no
 * polling); then the thread.
 */
const settled = (base: string, threadId: string, token: string) =>
  Effect.promise(async () => {
    const thread = await getThread(base, threadId, token)
    if (thread.running === null) return thread
    const response = await fetch(`${base}/v1/threads/${threadId}/events`, {
      headers: { authorization: `Bearer ${token}`, "last-event-id": thread.lastEventId }
    })
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
    const turnId = thread.running.turnId
    const isEnd = (line: string) => {
      if (!line.startsWith("data: ")) return false
      const event = decodeEvent(line.slice("data: ".length))
      return event._tag === "Some" && event.value.type === "turn_ended" && event.value.turnId === turnId
    }
    let text = ""
    while (!text.split("\n").some(isEnd)) {
      const read = await reader.read()
      if (read.done) throw new Error(`the events of thread ${threadId} ended before its turn did`)
      text += read.value
    }
    await reader.cancel()
    const after = await getThread(base, threadId, token)
    expect(after.running).toBe(null)
    return after
  })

describe("threads on sluice serve", () => {
  it.effect(
    "a thread token from sluice token runs three turns; the third request carries the whole history",
    () =>
      Effect.gen(function*() {
        const provider = yield* Loopback.serve([
          { _tag: "sse", body: thinking },
          { _tag: "sse", body: text },
          { _tag: "sse", body: text }
        ])
        const env = { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: provider.url, SLUICE_API_TOKENS: apiToken }
        const base = yield* serving(
          env,
          "--thread-providers",
          "anthropic",
          "--thread-models",
          "claude-opus-4-1",
          "--thread-tools",
          toolsFile()
        )
        const minted = yield* sluice(env, ["token", "--thread", "chat-42", "--scope", "write", "--ttl", "1h"])
        expect(minted.code).toBe(0)
        expect(minted.stdout).toMatch(/^th1\.\d+\.write\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}\n$/)
        const token = minted.stdout.trim()

        const first = yield* post(base, "chat-42", token, {
          message: { id: "u1", role: "user", parts: [{ type: "text", text: "Weather and time in Lisbon?" }] },
          tools: ["weather", "local_time", "ping"]
        })
        expect(first.status).toBe(200)
        expect(first.text.trimEnd().endsWith("data: [DONE]")).toBe(true)
        yield* settled(base, "chat-42", token)
        const second = yield* post(base, "chat-42", token, {
          toolResults: [
            { toolCallId: "toolu_weather", output: { temperature: 21 } },
            { toolCallId: "toolu_time", output: "14:05" },
            { toolCallId: "toolu_ping", output: "pong" }
          ]
        })
        expect(second.status).toBe(200)
        yield* settled(base, "chat-42", token)
        const third = yield* post(base, "chat-42", token, { message: { role: "user", content: "Thanks!" } })
        expect(third.status).toBe(200)
        const thread = yield* settled(base, "chat-42", token)
        expect(thread.turnCount).toBe(3)

        const requests = provider.requests()
        expect(requests.length).toBe(3)
        const body = requests[2]!.body as {
          readonly model: string
          readonly messages: ReadonlyArray<
            { readonly role: string; readonly content: ReadonlyArray<Record<string, unknown>> | string }
          >
        }
        expect(body.model).toBe("claude-opus-4-1")
        const blocks = body.messages.flatMap((message) =>
          typeof message.content === "string"
            ? [{ role: message.role, type: "text", text: message.content }]
            : message.content.map((block) => ({ role: message.role, ...block }))
        )
        // the user's first message, the assistant's thinking (signed), redacted thinking and calls
        expect(blocks[0]).toMatchObject({ role: "user", type: "text", text: "Weather and time in Lisbon?" })
        expect(blocks).toContainEqual(expect.objectContaining({
          role: "assistant",
          type: "thinking",
          thinking: "Two lookups, both at once.",
          signature: "EqQBCkgIARABGAIiQL2sig=="
        }))
        expect(blocks).toContainEqual(
          expect.objectContaining({ role: "assistant", type: "redacted_thinking", data: "RWRhY3RlZCBibG9i" })
        )
        expect(blocks).toContainEqual(
          expect.objectContaining({ role: "assistant", type: "tool_use", id: "toolu_weather", name: "weather" })
        )
        // the results the client sent, and the second answer, then the new message
        expect(blocks).toContainEqual(
          expect.objectContaining({ role: "user", type: "tool_result", tool_use_id: "toolu_weather" })
        )
        expect(blocks).toContainEqual(
          expect.objectContaining({ role: "assistant", type: "text", text: "Hello, wörld ☂." })
        )
        expect(blocks[blocks.length - 1]).toMatchObject({ role: "user", type: "text", text: "Thanks!" })
        // the first request asked for the tools the server defines, by the names sent
        expect(
          (requests[0]!.body as { readonly tools: ReadonlyArray<{ readonly name: string }> }).tools.map((tool) =>
            tool.name
          )
        ).toStrictEqual(["weather", "local_time", "ping"])
      }).pipe(Effect.scoped),
    90_000
  )

  it.effect(
    "a model or a tool the server does not allow is 400 naming the field; sluice token refuses a bad thread id",
    () =>
      Effect.gen(function*() {
        const env = { ANTHROPIC_API_KEY: "test-key", SLUICE_API_TOKENS: apiToken }
        const base = yield* serving(env, "--thread-models", "claude-opus-4-1")
        const answer = (body: unknown) =>
          Effect.map(post(base, "chat-7", apiToken, body), (got) => [got.status, JSON.parse(got.text).error.field])
        const message = { role: "user", content: "Hi" }
        expect(yield* answer({ message, model: "gpt-9" })).toStrictEqual([400, "model"])
        expect(yield* answer({ message, tools: ["rm"] })).toStrictEqual([400, "tools[0]"])
        expect(yield* answer({ message, provider: "gemini-x" })).toStrictEqual([400, "provider"])
        expect(yield* answer({ message: { id: "a1", role: "assistant", parts: [] } })).toStrictEqual([
          400,
          "message.role"
        ])
        const bad = yield* sluice(env, ["token", "--thread", "has space"])
        expect(bad.code).toBe(2)
        expect(bad.stdout).toBe("")
        expect(bad.stderr).toContain("--thread")
        const noKey = yield* sluice({}, ["token", "--thread", "t"])
        expect(noKey.code).toBe(2)
        expect(noKey.stderr).toContain("SLUICE_API_TOKENS")
      }).pipe(Effect.scoped),
    90_000
  )
})
