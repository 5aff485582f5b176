/**
 * Normalization, Anthropic Messages and OpenAI Chat Completions: Sluice's
 * `Sse.decode` + provider `normalize` next to the Vercel AI SDK's own provider model
 * (`doStream` fed the same bytes through a custom `fetch`), in the same process.
 */
import { createAnthropic } from "@ai-sdk/anthropic"
import { createOpenAI } from "@ai-sdk/openai"
import { Sse } from "@sluice/core"
import { Anthropic, OpenAiChat } from "@sluice/providers"
import { drain, prompt, recordedFetch } from "./aiSdk.js"
import { compare, reads, report, verdict } from "./harness.js"
import { body, count } from "./sse.js"

const words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
const piece = (i: number): string => ` ${words[i % 8]} ${words[(i * 3) % 8]} ${words[(i * 5) % 8]}, ${i}`
const toolArguments = JSON.stringify({
  path: "/tmp/report.txt",
  query: "quarterly numbers",
  limit: 25,
  tags: ["a", "b", "c"]
})
const fragments = (text: string): Array<string> => text.match(/[\s\S]{1,7}/g) ?? []

/** An Anthropic Messages stream: a thinking block, `deltas` text deltas, two tool calls. */
export const anthropicTranscript = (deltas: number): string => {
  const out: Array<string> = []
  const event = (data: { readonly type: string; readonly [key: string]: unknown }) =>
    out.push(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`)
  event({
    type: "message_start",
    message: {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [],
      stop_reason: null,
      usage: { input_tokens: 100, output_tokens: 1 }
    }
  })
  event({ type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } })
  for (let i = 0; i < 50; i++) {
    event({ type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: piece(i) } })
  }
  event({ type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "EqQBCkgIARABGAIiQL2" } })
  event({ type: "content_block_stop", index: 0 })
  event({ type: "content_block_start", index: 1, content_block: { type: "text", text: "" } })
  for (let i = 0; i < deltas; i++) {
    event({ type: "content_block_delta", index: 1, delta: { type: "text_delta", text: piece(i) } })
  }
  event({ type: "content_block_stop", index: 1 })
  for (const call of [0, 1]) {
    event({
      type: "content_block_start",
      index: 2 + call,
      content_block: { type: "tool_use", id: `toolu_${call}`, name: "read_file", input: {} }
    })
    for (const partial_json of fragments(toolArguments)) {
      event({ type: "content_block_delta", index: 2 + call, delta: { type: "input_json_delta", partial_json } })
    }
    event({ type: "content_block_stop", index: 2 + call })
  }
  event({
    type: "message_delta",
    delta: { stop_reason: "tool_use", stop_sequence: null },
    usage: { output_tokens: deltas * 5 }
  })
  event({ type: "message_stop" })
  return out.join("")
}

/** An OpenAI Chat Completions stream: `deltas` content deltas, two tool calls, usage, `[DONE]`. */
export const openAiChatTranscript = (deltas: number): string => {
  const out: Array<string> = []
  const base = { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "gpt-4o" }
  const chunk = (data: object) => out.push(`data: ${JSON.stringify({ ...base, ...data })}\n\n`)
  chunk({ choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] })
  for (let i = 0; i < deltas; i++) chunk({ choices: [{ index: 0, delta: { content: piece(i) }, finish_reason: null }] })
  for (const call of [0, 1]) {
    const start = { index: call, id: `call_${call}`, type: "function", function: { name: "read_file", arguments: "" } }
    chunk({ choices: [{ index: 0, delta: { tool_calls: [start] }, finish_reason: null }] })
    for (const text of fragments(toolArguments)) {
      chunk({
        choices: [{
          index: 0,
          delta: { tool_calls: [{ index: call, function: { arguments: text } }] },
          finish_reason: null
        }]
      })
    }
  }
  chunk({ choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] })
  chunk({ choices: [], usage: { prompt_tokens: 100, completion_tokens: deltas * 5, total_tokens: 100 + deltas * 5 } })
  out.push("data: [DONE]\n\n")
  return out.join("")
}

const aiSdkAnthropic = async (chunks: ReadonlyArray<Uint8Array>): Promise<number> => {
  const model = createAnthropic({ apiKey: "bench", fetch: recordedFetch(chunks) })("claude-sonnet-4-5")
  const result = await model.doStream({ prompt })
  return drain(result.stream)
}

const aiSdkOpenAiChat = async (chunks: ReadonlyArray<Uint8Array>): Promise<number> => {
  const model = createOpenAI({ apiKey: "bench", fetch: recordedFetch(chunks) }).chat("gpt-4o")
  const result = await model.doStream({ prompt })
  return drain(result.stream)
}

/** Runs the normalization benchmark for Anthropic and OpenAI Chat and returns its report. */
export const run = async (): Promise<string> => {
  const cases = [
    {
      name: "Anthropic Messages",
      text: anthropicTranscript(36_000),
      sluice: (chunks: ReadonlyArray<Uint8Array>) => count(body(chunks).pipe(Sse.decode(), Anthropic.normalize())),
      aiSdk: aiSdkAnthropic
    },
    {
      name: "OpenAI Chat Completions",
      text: openAiChatTranscript(16_000),
      sluice: (chunks: ReadonlyArray<Uint8Array>) => count(body(chunks).pipe(Sse.decode(), OpenAiChat.normalize())),
      aiSdk: aiSdkOpenAiChat
    }
  ]
  const sections: Array<string> = []
  for (const { aiSdk, name, sluice, text } of cases) {
    const bytes = new TextEncoder().encode(text)
    const chunks = reads(bytes, 16 * 1024)
    const comparison = await compare(
      bytes.length,
      { name: "AI SDK doStream", run: () => aiSdk(chunks) },
      { name: "Sluice Sse.decode + normalize", run: () => sluice(chunks) }
    )
    sections.push(
      report(`Normalization, ${name}, ${(bytes.length / 1e6).toFixed(1)} MB transcript, 16 KiB reads`, [
        comparison.reference,
        comparison.subject
      ], comparison.reference) +
        `\n\n${verdict(comparison, "the AI SDK")}`
    )
  }
  return sections.join("\n")
}
