/**
 * Tool-heavy transcripts for the normalization benchmark, one per provider wire
 * format: a short text, then rounds of parallel function calls whose arguments arrive
 * in fragments of 1 to 7 bytes (where the format streams arguments; Gemini sends each
 * call whole, several to a chunk), until the transcript reaches the size asked for.
 */

/** Calls made in parallel per round. */
const PARALLEL = 4

/** Edits per call: 12 make about 1.2 KB of arguments (`BENCH_TOOL_EDITS`). */
const EDITS = Number(process.env.BENCH_TOOL_EDITS ?? 12)

/** One call's arguments: about 100 bytes of JSON per edit, ASCII, different per call. */
const argumentsOf = (call: number): string =>
  JSON.stringify({
    path: `/srv/data/report-${call}.txt`,
    edits: Array.from(
      { length: EDITS },
      (_, i) => ({ line: call + i, text: `replace ${i} of call ${call} with a new sentence` })
    ),
    dryRun: call % 2 === 0
  })

/** Fragments of 1 to 7 bytes, cycling. */
const fragments = (text: string): Array<string> => {
  const out: Array<string> = []
  for (let i = 0, n = 0; i < text.length; n++) {
    const size = 1 + ((n * 5) % 7)
    out.push(text.slice(i, i + size))
    i += size
  }
  return out
}

/** The fragments of one round's calls, interleaved as a provider streams parallel calls. */
const interleaved = (calls: ReadonlyArray<number>): Array<readonly [slot: number, fragment: string]> => {
  const pieces = calls.map((call) => fragments(argumentsOf(call)))
  const out: Array<readonly [number, string]> = []
  for (let i = 0; pieces.some((p) => i < p.length); i++) {
    for (let slot = 0; slot < pieces.length; slot++) {
      const piece = pieces[slot]![i]
      if (piece !== undefined) out.push([slot, piece])
    }
  }
  return out
}

const roundCalls = (round: number) => Array.from({ length: PARALLEL }, (_, slot) => round * PARALLEL + slot)

/** OpenAI Chat Completions: rounds of parallel `tool_calls`, fragments interleaved by index. */
export const openAiChat = (bytes: number): string => {
  const out: Array<string> = []
  let size = 0
  const base = { id: "chatcmpl-tools", object: "chat.completion.chunk", created: 1, model: "gpt-4o" }
  const chunk = (data: object) => {
    const line = `data: ${JSON.stringify({ ...base, ...data })}\n\n`
    size += line.length
    out.push(line)
  }
  const delta = (delta: object) => chunk({ choices: [{ index: 0, delta, finish_reason: null }] })
  delta({ role: "assistant", content: "Editing the files." })
  let index = 0
  for (let round = 0; size < bytes; round++) {
    const calls = roundCalls(round)
    for (const [slot, call] of calls.entries()) {
      delta({
        tool_calls: [{
          index: index + slot,
          id: `call_${call}`,
          type: "function",
          function: { name: "edit_file", arguments: "" }
        }]
      })
    }
    for (const [slot, fragment] of interleaved(calls)) {
      delta({ tool_calls: [{ index: index + slot, function: { arguments: fragment } }] })
    }
    index += calls.length
  }
  chunk({ choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] })
  chunk({ choices: [], usage: { prompt_tokens: 100, completion_tokens: 1000, total_tokens: 1100 } })
  out.push("data: [DONE]\n\n")
  return out.join("")
}

/** Anthropic Messages: a text block, then `tool_use` blocks one after another (the API does not interleave them). */
export const anthropic = (bytes: number): string => {
  const out: Array<string> = []
  let size = 0
  const event = (data: { readonly type: string; readonly [key: string]: unknown }) => {
    const line = `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`
    size += line.length
    out.push(line)
  }
  event({
    type: "message_start",
    message: {
      id: "msg_tools",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [],
      stop_reason: null,
      usage: { input_tokens: 100, output_tokens: 1 }
    }
  })
  event({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } })
  event({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Editing the files." } })
  event({ type: "content_block_stop", index: 0 })
  for (let call = 0; size < bytes; call++) {
    const index = call + 1
    event({
      type: "content_block_start",
      index,
      content_block: { type: "tool_use", id: `toolu_${call}`, name: "edit_file", input: {} }
    })
    for (const partial_json of fragments(argumentsOf(call))) {
      event({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json } })
    }
    event({ type: "content_block_stop", index })
  }
  event({
    type: "message_delta",
    delta: { stop_reason: "tool_use", stop_sequence: null },
    usage: { output_tokens: 1000 }
  })
  event({ type: "message_stop" })
  return out.join("")
}

/** OpenAI Responses: `function_call` items, their argument deltas interleaved by output index. */
export const openAiResponses = (bytes: number): string => {
  const out: Array<string> = []
  let size = 0
  let sequence = 0
  const event = (data: Record<string, unknown>) => {
    const line = `event: ${String(data.type)}\ndata: ${JSON.stringify({ ...data, sequence_number: sequence++ })}\n\n`
    size += line.length
    out.push(line)
  }
  const response = (status: string, extra: Record<string, unknown> = {}) => ({
    id: "resp_tools",
    object: "response",
    created_at: 1,
    status,
    model: "gpt-5",
    output: [],
    ...extra
  })
  event({ type: "response.created", response: response("in_progress") })
  let outputIndex = 0
  for (let round = 0; size < bytes; round++) {
    const calls = roundCalls(round)
    const item = (call: number) => ({
      id: `fc_${call}`,
      type: "function_call",
      call_id: `call_${call}`,
      name: "edit_file"
    })
    for (const [slot, call] of calls.entries()) {
      event({
        type: "response.output_item.added",
        output_index: outputIndex + slot,
        item: { ...item(call), status: "in_progress", arguments: "" }
      })
    }
    for (const [slot, delta] of interleaved(calls)) {
      event({
        type: "response.function_call_arguments.delta",
        item_id: `fc_${calls[slot]}`,
        output_index: outputIndex + slot,
        delta
      })
    }
    for (const [slot, call] of calls.entries()) {
      const args = argumentsOf(call)
      event({
        type: "response.function_call_arguments.done",
        item_id: `fc_${call}`,
        output_index: outputIndex + slot,
        arguments: args
      })
      event({
        type: "response.output_item.done",
        output_index: outputIndex + slot,
        item: { ...item(call), status: "completed", arguments: args }
      })
    }
    outputIndex += calls.length
  }
  event({
    type: "response.completed",
    response: response("completed", {
      usage: {
        input_tokens: 100,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 1000,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 1100
      }
    })
  })
  return out.join("")
}

/** Gemini (CRLF): each chunk a round of parallel `functionCall` parts, arguments whole. */
export const gemini = (bytes: number): string => {
  const out: Array<string> = []
  let size = 0
  const chunk = (data: unknown) => {
    const line = `data: ${JSON.stringify(data)}\r\n\r\n`
    size += line.length
    out.push(line)
  }
  const candidate = (parts: ReadonlyArray<unknown>, finishReason?: string) => ({
    candidates: [{
      content: { role: "model", parts },
      index: 0,
      ...(finishReason === undefined ? {} : { finishReason })
    }],
    modelVersion: "gemini-2.5-pro"
  })
  chunk(candidate([{ text: "Editing the files." }]))
  for (let round = 0; size < bytes; round++) {
    chunk(
      candidate(
        roundCalls(round).map((call) => ({ functionCall: { name: "edit_file", args: JSON.parse(argumentsOf(call)) } }))
      )
    )
  }
  chunk({
    ...candidate([{ text: " Done." }], "STOP"),
    usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 1000, totalTokenCount: 1100 }
  })
  return out.join("")
}
