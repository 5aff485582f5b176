/**
 * Turns for the viewer tests, as Stream B messages: a replayed sample (the upserts
 * `sluice replay --jsonl` published for `packages/cli/samples/anthropic-weather.sse`,
 * with fresh ids), and a turn with every kind of item, markup in its texts included.
 */
import { StreamBMessage, StreamEvent } from "@sluice/core"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"

const fixture = readFileSync(new URL("./anthropic-weather.upserts.jsonl", import.meta.url), "utf8")
const decodeMessage = Schema.decodeUnknownSync(Schema.fromJsonString(StreamBMessage.StreamBMessage))

/**
 * The replayed sample, re-addressed to `turnId` (the fixture was written with
 * `pnpm sluice replay --provider anthropic packages/cli/samples/anthropic-weather.sse
 * --jsonl`).
 */
export const replayedSample = (turnId: string): Effect.Effect<ReadonlyArray<StreamBMessage.StreamBMessage>, unknown> =>
  Effect.gen(function*() {
    const threadId = randomUUID()
    const out: Array<StreamBMessage.StreamBMessage> = []
    for (const line of fixture.split("\n").filter((text) => text.length > 0)) {
      const message = decodeMessage(line)
      const payload = yield* StreamBMessage.decodePayload(message.payload)
      out.push(StreamBMessage.wrap({ ...payload, turnId, threadId }, randomUUID(), message.timestamp))
    }
    return out
  })

/** A turn with a user message, reasoning, tool calls and outputs, an error and a growing answer. */
export const everyKind = (turnId: string): ReadonlyArray<StreamBMessage.StreamBMessage> => {
  const threadId = randomUUID()
  const base = { type: "item_upsert", turnId, threadId } as const
  const answer = [
    "Tomorrow looks dry in the morning ",
    "Tomorrow looks dry in the morning with <b>light</b> wind; ",
    "Tomorrow looks dry in the morning with <b>light</b> wind; the ridge trail is open until 18:00. ",
    "Tomorrow looks dry in the morning with <b>light</b> wind; the ridge trail is open until 18:00. Take water & a layer."
  ]
  const payloads: ReadonlyArray<StreamBMessage.UIPayload> = [
    { type: "turn_started", turnId, threadId, modelId: "claude-sonnet-4-5", providerId: "anthropic" },
    {
      ...base,
      itemId: "run-1-user-prompt",
      itemType: "message",
      changeType: "completed",
      origin: "user",
      content: "Can I hike the ridge tomorrow? <img src=x onerror=\"document.title='owned'\">"
    },
    {
      ...base,
      itemId: "rs-1",
      itemType: "reasoning",
      changeType: "created",
      providerId: "anthropic",
      content: "The user asks about"
    },
    {
      ...base,
      itemId: "rs-1",
      itemType: "reasoning",
      changeType: "completed",
      providerId: "anthropic",
      content: "The user asks about tomorrow's weather on the ridge: check the forecast and the trail status."
    },
    {
      ...base,
      itemId: "call-1",
      itemType: "tool_call",
      changeType: "completed",
      toolName: "get_forecast",
      callId: "toolu_01",
      toolArguments: { location: "Ridge <north>", days: 1 },
      content: "{\"location\":\"Ridge <north>\",\"days\":1}"
    },
    {
      ...base,
      itemId: "out-1",
      itemType: "tool_output",
      changeType: "completed",
      callId: "toolu_01",
      success: true,
      toolOutput: { summary: "dry, 14 °C", wind: "12 km/h" },
      content: "{\"summary\":\"dry, 14 °C\",\"wind\":\"12 km/h\"}"
    },
    {
      ...base,
      itemId: "call-2",
      itemType: "tool_call",
      changeType: "completed",
      toolName: "trail_status",
      callId: "toolu_02",
      toolArguments: "ridge",
      content: "ridge"
    },
    {
      ...base,
      itemId: "out-2",
      itemType: "tool_output",
      changeType: "completed",
      callId: "toolu_02",
      success: false,
      toolOutput: "503 from the park service",
      content: "503 from the park service"
    },
    {
      ...base,
      itemId: "cmp-1",
      itemType: "compaction",
      changeType: "completed",
      providerId: "anthropic",
      content: "## Summary\nEarlier: the user planned a <b>hike</b>."
    },
    {
      ...base,
      itemId: "srv-1",
      itemType: "tool_call",
      changeType: "completed",
      toolName: "web_search",
      callId: "srvtoolu_01",
      toolArguments: { query: "ridge trail status" },
      providerExecuted: true,
      content: "{\"query\":\"ridge trail status\"}"
    },
    {
      ...base,
      itemId: "srv-out-1",
      itemType: "tool_output",
      changeType: "completed",
      callId: "srvtoolu_01",
      success: true,
      providerExecuted: true,
      toolOutput: [{ url: "https://parks.example/ridge", title: "Ridge trail" }],
      content: "[{\"url\":\"https://parks.example/ridge\",\"title\":\"Ridge trail\"}]"
    },
    {
      ...base,
      itemId: "err-1",
      itemType: "error",
      changeType: "completed",
      errorCode: "tool_timeout",
      errorMessage: "trail_status did not answer <in time>",
      content: "partial"
    },
    ...answer.map((content, i): StreamBMessage.UIPayload => ({
      ...base,
      itemId: "msg-1",
      itemType: "message",
      changeType: i === 0 ? "created" : "updated",
      origin: "agent",
      content
    })),
    {
      ...base,
      itemId: "msg-1",
      itemType: "message",
      changeType: "completed",
      origin: "agent",
      content: answer[answer.length - 1]!,
      sources: [
        {
          kind: "url",
          url: "https://parks.example/ridge",
          title: "Ridge trail <status>",
          cited_text: "open until <b>18:00</b>"
        },
        { kind: "url", url: "javascript:alert(1)", title: "not a link" },
        {
          kind: "document",
          document_index: 0,
          location: { unit: "page", start: 2, end: 3 },
          cited_text: "Bring water."
        }
      ]
    },
    {
      type: "turn_completed",
      turnId,
      threadId,
      status: "complete",
      usage: { promptTokens: 1436, completionTokens: 389, totalTokens: 1825 }
    }
  ]
  return payloads.map((payload, i) => StreamBMessage.wrap(payload, randomUUID(), 1_700_000_000_000 + i))
}

/**
 * The hostile markdown a message may carry: every way it tries to run script sets
 * `window.owned`, which the page must never get.
 */
export const hostileMarkdown = [
  "# Plan for **tomorrow**",
  "",
  "Take `water`, see [the trail page](https://parks.example/ridge) and [this](javascript:window.owned='link').",
  "",
  "<script>window.owned = 'script'</script>",
  "<img src=x onerror=\"window.owned = 'img'\">",
  "<a href=\"javascript:window.owned='a'\" onclick=\"window.owned='click'\">click me</a>",
  "<iframe src=\"javascript:parent.owned='frame'\"></iframe>",
  "",
  "- first",
  "- second"
].join("\n")

/**
 * A short turn whose answer is `hostileMarkdown`, with usage broken down; the user's
 * input is published after the answer started (the page still shows it first).
 */
export const markdownTurn = (turnId: string): ReadonlyArray<StreamBMessage.StreamBMessage> => {
  const threadId = randomUUID()
  const payloads: ReadonlyArray<StreamBMessage.UIPayload> = [
    { type: "turn_started", turnId, threadId, modelId: "gpt-4.1", providerId: "openai" },
    {
      type: "item_upsert",
      turnId,
      threadId,
      itemId: "msg-1",
      itemType: "message",
      changeType: "completed",
      origin: "agent",
      content: hostileMarkdown
    },
    {
      type: "item_upsert",
      turnId,
      threadId,
      itemId: "run-1-user-prompt",
      itemType: "message",
      changeType: "completed",
      origin: "user",
      content: "What do I take for the *ridge*?"
    },
    {
      type: "turn_completed",
      turnId,
      threadId,
      status: "complete",
      usage: {
        promptTokens: 1200,
        completionTokens: 300,
        totalTokens: 1500,
        inputTokens: 200,
        cacheReadTokens: 900,
        cacheWriteTokens: 100,
        reasoningTokens: 120
      }
    }
  ]
  return payloads.map((payload, i) => StreamBMessage.wrap(payload, randomUUID(), 1_700_000_000_000 + i * 1500))
}

/**
 * The Stream A head of `markdownTurn`: its answer begins 1.5 s after the turn started
 * (the list's first output, read from Stream A).
 */
export const markdownTurnEvents = (turnId: string): ReadonlyArray<StreamEvent.StreamEvent> => {
  const context = { runId: randomUUID() }
  return [
    StreamEvent.envelope(
      context,
      {
        type: "response_start",
        response_id: randomUUID(),
        turn_id: turnId,
        thread_id: randomUUID(),
        model_id: "gpt-4.1",
        provider_id: "openai",
        created_at: 1_700_000_000_000
      },
      randomUUID(),
      1_700_000_000_000
    ),
    StreamEvent.envelope(
      context,
      { type: "item_start", item_id: "msg-1", item_type: "message" },
      randomUUID(),
      1_700_000_001_500
    )
  ]
}
