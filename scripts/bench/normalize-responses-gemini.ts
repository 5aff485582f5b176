/**
 * Normalization of the OpenAI Responses and Gemini streams: Sluice's `Sse.decode` +
 * `normalize` next to the Vercel AI SDK's own provider models (`doStream` fed the same
 * bytes through a `fetch` that returns the recorded body), in the same process.
 */
import { createGoogleGenerativeAI } from "@ai-sdk/google"
import { createOpenAI } from "@ai-sdk/openai"
import { Sse } from "@sluice/core"
import { Gemini, OpenAiResponses } from "@sluice/providers"
import type { Normalizer } from "@sluice/providers"
import { drain, prompt, recordedFetch } from "./aiSdk.js"
import { compare, reads, report, verdict } from "./harness.js"
import { body, count } from "./sse.js"

const words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
const piece = (i: number): string => ` ${words[i % 8]} ${words[(i * 3) % 8]} ${words[(i * 5) % 8]}, ${i}`
const args = JSON.stringify({ path: "/tmp/report.txt", query: "quarterly numbers", limit: 25, tags: ["a", "b", "c"] })
const fragments = args.match(/.{1,7}/g) ?? [args]

/** A Responses API stream: a reasoning summary, `deltas` text deltas, two calls with 7-byte fragments. */
export const responsesTranscript = (deltas: number): string => {
  const out: Array<string> = []
  let sequence = 0
  const event = (data: Record<string, unknown>) =>
    out.push(`event: ${String(data.type)}\ndata: ${JSON.stringify({ ...data, sequence_number: sequence++ })}\n\n`)
  const response = (status: string, extra: Record<string, unknown> = {}) => ({
    id: "resp_bench",
    object: "response",
    created_at: 1,
    status,
    model: "gpt-5",
    output: [],
    ...extra
  })
  event({ type: "response.created", response: response("in_progress") })
  event({ type: "response.output_item.added", output_index: 0, item: { id: "rs_1", type: "reasoning", summary: [] } })
  event({
    type: "response.reasoning_summary_part.added",
    item_id: "rs_1",
    output_index: 0,
    summary_index: 0,
    part: { type: "summary_text", text: "" }
  })
  let summary = ""
  for (let i = 0; i < 50; i++) {
    summary += piece(i)
    event({
      type: "response.reasoning_summary_text.delta",
      item_id: "rs_1",
      output_index: 0,
      summary_index: 0,
      delta: piece(i)
    })
  }
  event({
    type: "response.output_item.done",
    output_index: 0,
    item: {
      id: "rs_1",
      type: "reasoning",
      summary: [{ type: "summary_text", text: summary }],
      encrypted_content: "gAAAAABbench=="
    }
  })
  event({
    type: "response.output_item.added",
    output_index: 1,
    item: { id: "msg_1", type: "message", status: "in_progress", role: "assistant", content: [] }
  })
  event({
    type: "response.content_part.added",
    item_id: "msg_1",
    output_index: 1,
    content_index: 0,
    part: { type: "output_text", text: "", annotations: [] }
  })
  let text = ""
  for (let i = 0; i < deltas; i++) {
    text += piece(i)
    event({ type: "response.output_text.delta", item_id: "msg_1", output_index: 1, content_index: 0, delta: piece(i) })
  }
  event({ type: "response.output_text.done", item_id: "msg_1", output_index: 1, content_index: 0, text })
  event({
    type: "response.output_item.done",
    output_index: 1,
    item: {
      id: "msg_1",
      type: "message",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text, annotations: [] }]
    }
  })
  for (const t of [0, 1]) {
    const call = { id: `fc_${t}`, type: "function_call", call_id: `call_${t}`, name: "read_file" }
    event({
      type: "response.output_item.added",
      output_index: 2 + t,
      item: { ...call, status: "in_progress", arguments: "" }
    })
    for (const fragment of fragments) {
      event({
        type: "response.function_call_arguments.delta",
        item_id: `fc_${t}`,
        output_index: 2 + t,
        delta: fragment
      })
    }
    event({ type: "response.function_call_arguments.done", item_id: `fc_${t}`, output_index: 2 + t, arguments: args })
    event({
      type: "response.output_item.done",
      output_index: 2 + t,
      item: { ...call, status: "completed", arguments: args }
    })
  }
  event({
    type: "response.completed",
    response: response("completed", {
      usage: {
        input_tokens: 100,
        input_tokens_details: { cached_tokens: 20 },
        output_tokens: deltas * 5,
        output_tokens_details: { reasoning_tokens: 250 },
        total_tokens: 100 + deltas * 5
      }
    })
  })
  return out.join("")
}

/** A Gemini stream (CRLF): 50 thought parts, `deltas` text parts, two whole calls, usage. */
export const geminiTranscript = (deltas: number): string => {
  const out: Array<string> = []
  const chunk = (data: unknown) => out.push(`data: ${JSON.stringify(data)}\r\n\r\n`)
  const candidate = (parts: ReadonlyArray<unknown>, finishReason?: string) => ({
    candidates: [{
      content: { role: "model", parts },
      index: 0,
      ...(finishReason === undefined ? {} : { finishReason })
    }],
    modelVersion: "gemini-2.5-pro"
  })
  for (let i = 0; i < 50; i++) chunk(candidate([{ text: piece(i), thought: true }]))
  for (let i = 0; i < deltas; i++) chunk(candidate([{ text: piece(i) }]))
  const calls = [0, 1].map((t) => ({
    functionCall: { name: "read_file", args: JSON.parse(args) },
    ...(t === 0 ? { thoughtSignature: "CiQBVKhc" } : {})
  }))
  chunk({
    ...candidate(calls, "STOP"),
    usageMetadata: {
      promptTokenCount: 100,
      candidatesTokenCount: deltas * 5,
      thoughtsTokenCount: 250,
      totalTokenCount: 350 + deltas * 5
    }
  })
  return out.join("")
}

const sluice = (normalize: Normalizer.Normalize, chunks: ReadonlyArray<Uint8Array>) => () =>
  count(body(chunks).pipe(Sse.decode(), normalize()))

/** Runs the normalization benchmark for the Responses API and Gemini and returns its report. */
export const run = async (): Promise<string> => {
  const sections: Array<string> = []
  const cases = [
    {
      title: "OpenAI Responses",
      text: responsesTranscript(12_000),
      normalize: OpenAiResponses.normalize,
      aiSdk: (chunks: ReadonlyArray<Uint8Array>) => async () => {
        const model = createOpenAI({ apiKey: "bench", fetch: recordedFetch(chunks) }).responses("gpt-5")
        const result = await model.doStream({ prompt })
        return drain(result.stream)
      }
    },
    {
      title: "Gemini",
      text: geminiTranscript(16_000),
      normalize: Gemini.normalize,
      aiSdk: (chunks: ReadonlyArray<Uint8Array>) => async () => {
        const model = createGoogleGenerativeAI({ apiKey: "bench", fetch: recordedFetch(chunks) })("gemini-2.5-pro")
        const result = await model.doStream({ prompt })
        return drain(result.stream)
      }
    }
  ]
  for (const { aiSdk, normalize, text, title } of cases) {
    const bytes = new TextEncoder().encode(text)
    const chunks = reads(bytes, 16 * 1024)
    const comparison = await compare(
      bytes.length,
      { name: "AI SDK doStream", run: aiSdk(chunks) },
      { name: "Sluice Sse.decode + normalize", run: sluice(normalize, chunks) }
    )
    sections.push(
      report(`Normalization, ${title}, ${(bytes.length / 1e6).toFixed(1)} MB transcript, 16 KiB reads`, [
        comparison.reference,
        comparison.subject
      ], comparison.reference) +
        `\n\n${verdict(comparison, "the AI SDK")}`
    )
  }
  return sections.join("\n")
}
