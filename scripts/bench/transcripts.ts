/**
 * Large wire-shaped transcripts for the benchmarks, generated in process: text deltas,
 * a reasoning block and two tool calls with small argument fragments.
 */

const words = ["stream", "token", "delta", "the", "of", "Sluice", "événement", "naïve", "data", "frame", "turn", "☂"]

const phrase = (i: number): string => ` ${words[i % words.length]}${i % 7 === 0 ? "," : ""}`

/** Anthropic Messages SSE with `deltas` text deltas. */
export const anthropic = (deltas: number): string => {
  const out: Array<string> = []
  const event = (name: string, data: unknown) => out.push(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`)
  event("message_start", {
    type: "message_start",
    message: {
      id: "msg_bench",
      type: "message",
      role: "assistant",
      model: "claude-bench",
      content: [],
      stop_reason: null,
      usage: { input_tokens: 100, cache_read_input_tokens: 20, cache_creation_input_tokens: 0, output_tokens: 1 }
    }
  })
  event("content_block_start", {
    type: "content_block_start",
    index: 0,
    content_block: { type: "thinking", thinking: "", signature: "" }
  })
  for (let i = 0; i < Math.max(1, deltas >> 4); i++) {
    event("content_block_delta", {
      type: "content_block_delta",
      index: 0,
      delta: { type: "thinking_delta", thinking: phrase(i) }
    })
  }
  event("content_block_delta", {
    type: "content_block_delta",
    index: 0,
    delta: { type: "signature_delta", signature: "c2lnbmF0dXJl" }
  })
  event("content_block_stop", { type: "content_block_stop", index: 0 })
  event("content_block_start", { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } })
  for (let i = 0; i < deltas; i++) {
    event("content_block_delta", {
      type: "content_block_delta",
      index: 1,
      delta: { type: "text_delta", text: phrase(i) }
    })
    if (i % 500 === 0) out.push("event: ping\ndata: {\"type\": \"ping\"}\n\n")
  }
  event("content_block_stop", { type: "content_block_stop", index: 1 })
  for (const [index, name] of [[2, "search"], [3, "lookup"]] as const) {
    event("content_block_start", {
      type: "content_block_start",
      index,
      content_block: { type: "tool_use", id: `toolu_${index}`, name, input: {} }
    })
    const args = JSON.stringify({ query: "streaming benchmarks", limit: 10, tags: ["a", "b"] })
    for (let i = 0; i < args.length; i += 7) {
      event("content_block_delta", {
        type: "content_block_delta",
        index,
        delta: { type: "input_json_delta", partial_json: args.slice(i, i + 7) }
      })
    }
    event("content_block_stop", { type: "content_block_stop", index })
  }
  event("message_delta", {
    type: "message_delta",
    delta: { stop_reason: "tool_use" },
    usage: { output_tokens: deltas }
  })
  event("message_stop", { type: "message_stop" })
  return out.join("")
}
