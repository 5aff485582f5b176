/**
 * The OpenAI Responses API (`POST /v1/responses`): its `stream: true` event stream and
 * its non-streaming `response` object, into the hub StreamEvent vocabulary.
 *
 * Output items keep the provider's item ids. A `message` item's text (and refusal
 * text) is the message content; a `reasoning` item's summary is the reasoning content
 * and its `encrypted_content` is kept; a `function_call` item's `arguments` are taken
 * from the finished item, never from a prefix that happens to parse. A hosted tool's
 * item (`web_search_call`, `file_search_call`, `code_interpreter_call`,
 * `image_generation_call`, `mcp_call`, `mcp_list_tools`: OpenAI runs them) becomes a
 * provider-executed `function_call` named after its type (an MCP call after its tool)
 * with what the tool was asked as arguments, followed by a provider-executed
 * `function_call_output` with what it gave. The client calls of their own kind keep the
 * whole item in `provider_metadata.item` and are named after their tool: a
 * `custom_tool_call` (its free-text input as `{"input": ...}`; provider-executed when
 * its name is not among the request's tools, as xAI's X Search streams its own tools),
 * an `apply_patch_call`
 * (`apply_patch`, its operation), a `local_shell_call` (`local_shell`) and a
 * `shell_call` (`shell`) with their `action` as sent, a client `tool_search_call`, a
 * `computer_call`. A
 * `shell_call` in a hosted container and a server `tool_search_call` are OpenAI's: their
 * output items in the stream become their provider-executed results. An
 * `mcp_approval_request` is an `approval_request` item, never a tool call. Reasoning
 * text from every source (deltas, `.done` events, the finished item) is folded once per
 * part, summaries and raw `reasoning_text` each stated as such. Any other output item
 * becomes a `function_call` named after its type, with the whole item in
 * `provider_metadata.item`.
 *
 * @since 0.1.0
 */
import type { StreamEvent } from "@sluice/core"
import { Json, OutputItem, ProviderError, TurnBuilder, Usage } from "@sluice/core"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Citations from "../Citations.js"
import * as ErrorClassification from "../ErrorClassification.js"
import { endTruncated, finishWith } from "../internal/endTurn.js"
import * as HostedTools from "./internal/hostedTools.js"
import { decodeSseWith, type Handler, normalizeWith } from "../internal/normalizerChannel.js"
import { decodeValue, isDoneSentinel, parseJson } from "../internal/wireJson.js"

// an error event as it came, for `originalError` (parsed JSON always passes)
const isJson = Schema.is(Json.JsonValue)
import type { DecodeSse, Normalize, NormalizeOptions, NormalizeResponse } from "../Normalizer.js"
import { WireDecodeError } from "../WireDecodeError.js"

const provider = "openai-responses"

type Out = Array<StreamEvent.StreamEvent>

const optional = <S extends Schema.Constraint>(schema: S) => Schema.optionalKey(schema)
const nullable = <S extends Schema.Constraint>(schema: S) => Schema.optionalKey(Schema.NullOr(schema))

// ---------------------------------------------------------------------------
// Wire schemas
// ---------------------------------------------------------------------------

/**
 * The `usage` object of a response. `input_tokens` includes the cached tokens and
 * `output_tokens` includes the reasoning tokens. Other fields are kept for `raw`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ResponseUsage = Schema.StructWithRest(
  Schema.Struct({
    input_tokens: nullable(Schema.Number),
    input_tokens_details: nullable(Schema.Struct({ cached_tokens: nullable(Schema.Number) })),
    output_tokens: nullable(Schema.Number),
    output_tokens_details: nullable(Schema.Struct({ reasoning_tokens: nullable(Schema.Number) })),
    total_tokens: nullable(Schema.Number)
  }),
  [Schema.Record(Schema.String, Json.JsonValue)]
).annotate({ identifier: "ResponseUsage" })

/**
 * @since 0.1.0
 * @category models
 */
export type ResponseUsage = typeof ResponseUsage.Type

/**
 * An output item as it arrives: a JSON object with a `type`, read further by type.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RawOutputItem = Schema.StructWithRest(
  Schema.Struct({ type: Schema.String, id: optional(Schema.String) }),
  [Schema.Record(Schema.String, Json.JsonValue)]
).annotate({ identifier: "ResponseOutputItem" })

/**
 * @since 0.1.0
 * @category models
 */
export type RawOutputItem = typeof RawOutputItem.Type

const ErrorDetails = Schema.Struct({
  type: nullable(Schema.String),
  code: nullable(Schema.String),
  message: nullable(Schema.String)
})

/**
 * The `response` object: the non-streaming body, and the payload of the streamed
 * lifecycle events (`response.created`, `response.completed`, ...).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Response = Schema.Struct({
  id: optional(Schema.String),
  model: nullable(Schema.String),
  status: nullable(Schema.String),
  output: nullable(Schema.Array(RawOutputItem)),
  usage: nullable(ResponseUsage),
  error: nullable(ErrorDetails),
  incomplete_details: nullable(Schema.Struct({ reason: nullable(Schema.String) })),
  /** the request's tools, as the response echoes them (`{type, name?, ...}`) */
  tools: nullable(Schema.Array(Json.JsonValue))
}).annotate({ identifier: "Response" })

/**
 * @since 0.1.0
 * @category models
 */
export type Response = typeof Response.Type

const Index = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
const EventType = Schema.Struct({ type: Schema.String })
const LifecycleEvent = Schema.Struct({ response: Response })
const OutputItemEvent = Schema.Struct({ output_index: nullable(Index), item: RawOutputItem })
const DeltaEvent = Schema.Struct({
  item_id: nullable(Schema.String),
  output_index: nullable(Index),
  delta: Schema.String
})
// the reasoning events: `.delta`, `.done`, `reasoning_summary_part.*`, `content_part.*`;
// gateways leave out `item_id` or the index at times
const ReasoningEvent = Schema.Struct({
  item_id: nullable(Schema.String),
  output_index: nullable(Index),
  summary_index: nullable(Index),
  content_index: nullable(Index),
  delta: nullable(Schema.String),
  text: nullable(Schema.String),
  part: nullable(Schema.Struct({ type: nullable(Schema.String), text: nullable(Schema.String) }))
})
const ErrorEvent = Schema.Struct({
  code: nullable(Schema.String),
  message: nullable(Schema.String),
  error: nullable(ErrorDetails)
})

const ContentPart = Schema.StructWithRest(Schema.Struct({ type: Schema.String }), [
  Schema.Record(Schema.String, Json.JsonValue)
])
const MessageWire = Schema.Struct({
  id: Schema.String,
  content: Schema.Array(ContentPart)
})
const TextPart = Schema.Struct({ text: Schema.String })
const ReasoningWire = Schema.Struct({
  id: Schema.String,
  summary: nullable(Schema.Array(TextPart)),
  content: nullable(Schema.Array(TextPart)),
  encrypted_content: nullable(Schema.String)
})
const ApprovalWire = Schema.Struct({
  name: Schema.String,
  arguments: Schema.String,
  server_label: optional(Schema.String)
})
const FunctionCallWire = Schema.Struct({
  id: Schema.String,
  call_id: Schema.String,
  name: Schema.String,
  arguments: Schema.String
})

const decodeEventType = decodeValue(provider, EventType)
const decodeLifecycle = decodeValue(provider, LifecycleEvent)
const decodeOutputItemEvent = decodeValue(provider, OutputItemEvent)
const decodeDelta = decodeValue(provider, DeltaEvent)
const decodeReasoningEvent = decodeValue(provider, ReasoningEvent)
const decodeErrorEvent = decodeValue(provider, ErrorEvent)
const decodeMessage = decodeValue(provider, MessageWire)
const decodeReasoning = decodeValue(provider, ReasoningWire)
const decodeFunctionCall = decodeValue(provider, FunctionCallWire)
const decodeApproval = decodeValue(provider, ApprovalWire)
const decodeResponse = decodeValue(provider, Response)

// ---------------------------------------------------------------------------
// Classification and usage
// ---------------------------------------------------------------------------

/**
 * Classifies an in-stream error (`error` event, `response.failed`) by its code, with
 * the one classifier every provider shares (`ProviderError.classify`).
 *
 * @since 0.1.0
 * @category errors
 */
export const classifyError = (code: string, message: string, raw?: unknown): ProviderError.ProviderError =>
  ProviderError.classify({ code, message, raw })

/**
 * The hub usage of a Responses `usage` object: `input` without the cached tokens,
 * `cacheRead` the cached tokens, `output` with the reasoning tokens, `reasoning` the
 * reasoning tokens. Missing usage is zeros.
 *
 * @since 0.1.0
 * @category usage
 */
export const toUsage = (usage: ResponseUsage | null | undefined): Usage.Usage => {
  if (usage === null || usage === undefined) return Usage.empty
  const input = usage.input_tokens ?? 0
  const cached = usage.input_tokens_details?.cached_tokens ?? 0
  return Usage.make({
    input: input - Math.min(cached, input),
    cacheRead: cached,
    output: usage.output_tokens,
    reasoning: usage.output_tokens_details?.reasoning_tokens,
    raw: usage
  })
}

// ---------------------------------------------------------------------------
// Output items
// ---------------------------------------------------------------------------

const stringField = (item: RawOutputItem, key: string): string | undefined => {
  const value = item[key]
  return typeof value === "string" ? value : undefined
}

/** The tool name of the items named after their tool, not a `name` field (the request's tool type). */
const toolNames: Readonly<Record<string, string>> = {
  local_shell_call: "local_shell",
  shell_call: "shell",
  apply_patch_call: "apply_patch",
  tool_search_call: "tool_search"
}

/** A `shell_call` run in a hosted container (its `environment` is not `local`): OpenAI runs it. */
const isHostedShell = (item: RawOutputItem): boolean => {
  const environment = item.environment
  return item.type === "shell_call" && Json.isObject(environment) && environment.type !== "local"
}

/** A tool search OpenAI runs itself (`execution` `server`, the default). */
const isServerSearch = (item: RawOutputItem): boolean =>
  (item.type === "tool_search_call" || item.type === "tool_search_output") && item.execution !== "client"

/** Output items that report a result OpenAI produced in the turn: a hosted shell's, a tool search's. */
const isProviderOutput = (item: RawOutputItem): boolean =>
  item.type === "shell_call_output" || (item.type === "tool_search_output" && isServerSearch(item))

/**
 * The names of the tools the request declared, when known (`NormalizeOptions.toolNames`,
 * else the response's echo of its `tools`); `undefined` when nothing says.
 */
type Declared = ReadonlySet<string> | undefined

/**
 * The tool names a response's echoed `tools` declare (function and custom tools carry a
 * `name`; hosted tools such as `web_search` or xAI's `x_search` do not), or `undefined`
 * when the response echoes none: an empty or missing list says nothing.
 */
const declaredBy = (tools: ReadonlyArray<Json.JsonValue> | null | undefined): Declared => {
  if (tools === undefined || tools === null || tools.length === 0) return undefined
  const names = new Set<string>()
  for (const tool of tools) if (Json.isObject(tool) && typeof tool.name === "string") names.add(tool.name)
  return names
}

/**
 * Whether a `custom_tool_call` is one the provider ran itself: a server that runs its
 * own built-in tools (xAI's X Search: `x_keyword_search`, `view_x_video`) streams them as
 * custom tool calls, under names the request never declared. With the request's tools
 * unknown, a custom tool call is the client's.
 */
const isServerCustomCall = (item: RawOutputItem, declared: Declared): boolean => {
  if (item.type !== "custom_tool_call" || declared === undefined) return false
  const name = stringField(item, "name")
  return name === undefined || !declared.has(name)
}

/** Items the client must run: the turn then ends with `tool-calls`. */
const isClientCall = (item: RawOutputItem, declared: Declared): boolean => {
  switch (item.type) {
    case "custom_tool_call":
      return !isServerCustomCall(item, declared)
    case "function_call":
    case "apply_patch_call":
    case "local_shell_call":
    case "computer_call":
      return true
    case "shell_call":
      return !isHostedShell(item)
    case "tool_search_call":
      return !isServerSearch(item)
    default:
      return false
  }
}

const itemTypeOf = (item: RawOutputItem): OutputItem.ItemType =>
  item.type === "message"
    ? "message"
    : item.type === "reasoning"
    ? "reasoning"
    : item.type === "mcp_approval_request"
    ? "approval_request"
    : item.type === "compaction"
    ? "compaction"
    : isProviderOutput(item)
    ? "function_call_output"
    : "function_call"

/**
 * Whether a call item OpenAI ran itself: every call the client is not asked to run
 * (`isClientCall`): hosted tools, a shell in a hosted container, a server tool search,
 * and an item of a kind Sluice does not know (a kind newer than it), which is reported,
 * kept whole and sent back as it came, but never asked of the client, since nothing says
 * it is its to run.
 */
const executedBy = (item: RawOutputItem, declared: Declared): { readonly provider_executed?: true } =>
  isClientCall(item, declared) ? {} : { provider_executed: true }

/** The name under which an item that is not a message or reasoning is reported. */
const callName = (item: RawOutputItem): string =>
  item.type === "function_call" || item.type === "custom_tool_call" || item.type === "mcp_call" ||
    item.type === "mcp_approval_request"
    ? stringField(item, "name") ?? item.type
    : toolNames[item.type] ?? item.type

/** The call id of a call item: its `call_id`, else its item id. */
const callIdOf = (item: RawOutputItem, id: string): string => stringField(item, "call_id") ?? item.id ?? id

/**
 * The JSON text of what a call item that is not a plain function call asks: a custom
 * tool's free-text `input` as `{"input": ...}`; an `apply_patch_call`'s `operation`; a
 * shell call's `action` as the provider sent it; a tool search's `arguments`.
 */
const callArguments = (item: RawOutputItem, streamed: string): string => {
  switch (item.type) {
    case "custom_tool_call": {
      const input = stringField(item, "input")
      return input === undefined ? streamed : HostedTools.stringArguments("input", input)
    }
    case "apply_patch_call":
      return Json.isObject(item.operation) ? HostedTools.patchArguments(item.operation) : streamed
    case "tool_search_call": {
      const args = item.arguments
      return typeof args === "string" ? args : args === undefined || args === null ? "{}" : JSON.stringify(args)
    }
    default: {
      const args = stringField(item, "arguments") ?? stringField(item, "code")
      if (args !== undefined) return args
      const action = item.action
      return action === undefined ? streamed : JSON.stringify(action)
    }
  }
}

/** The result a provider-run output item reports, as text: the shell's output entries, the tools found. */
const outputText = (item: RawOutputItem): string => {
  const result = item.type === "tool_search_output" ? item.tools : item.output
  return result === undefined ? "" : typeof result === "string" ? result : JSON.stringify(result)
}

interface FinalItem {
  readonly item: OutputItem.OutputItem
  /** The refusal text of a message, when the model refused. */
  readonly refusal: string | undefined
  /** The result of a hosted tool call, its own item after the call. */
  readonly result?: OutputItem.FunctionCallOutputItem
}

/**
 * The finished form of an output item other than reasoning. `id` is the Sluice item id;
 * `streamed` is the content that arrived as deltas, used only when the finished item
 * carries no text; `callId` the call id of an output item whose own is missing.
 */
const finalItem = (
  raw: RawOutputItem,
  id: string,
  streamed: string,
  line: number,
  callId: string | undefined,
  declared: Declared
): Result.Result<FinalItem, WireDecodeError> => {
  switch (raw.type) {
    case "message":
      return Result.map(decodeMessage({ ...raw, id }, line, "message item"), (message) => {
        let content = ""
        let refusal: string | undefined
        const annotations: Array<Json.JsonValue> = []
        const other: Array<Json.JsonObject> = []
        for (const part of message.content) {
          const text = part.type === "output_text" ? part.text : undefined
          const refused = part.type === "refusal" ? part.refusal : undefined
          if (typeof text === "string") {
            content += text
            if (Array.isArray(part.annotations)) annotations.push(...part.annotations)
          } else if (typeof refused === "string") {
            content += refused
            refusal = (refusal ?? "") + refused
          } else {
            other.push(part)
          }
        }
        const metadata: Record<string, Json.JsonValue> = {}
        if (annotations.length > 0) metadata.annotations = annotations
        if (refusal !== undefined) metadata.refusal = refusal
        if (other.length > 0) metadata.other_content = other
        // the message's `phase` (`commentary` before tool calls, `final_answer`): it goes back
        const phase = stringField(raw, "phase")
        if (phase !== undefined) metadata.phase = phase
        const item: OutputItem.MessageItem = {
          type: "message",
          id,
          content: content === "" ? streamed : content,
          origin: "agent",
          ...Citations.sourcesField(annotations, Citations.fromOpenAi),
          ...(Object.keys(metadata).length > 0 ? { provider_metadata: metadata } : {})
        }
        return { item, refusal }
      })
    case "function_call":
      return Result.map(decodeFunctionCall({ ...raw, id }, line, "function_call item"), (call) => {
        // a function found by tool search names its namespace, which must go back with it
        const namespace = stringField(raw, "namespace")
        return {
          item: {
            type: "function_call",
            id,
            call_id: call.call_id,
            name: call.name,
            arguments: call.arguments,
            ...(namespace === undefined ? {} : { provider_metadata: { namespace } })
          },
          refusal: undefined
        }
      })
    case "compaction":
      // the conversation so far, compacted: its `encrypted_content` goes back as it came
      return Result.succeed({
        item: { type: "compaction", id, content: streamed, provider_metadata: { type: raw.type, item: raw } },
        refusal: undefined
      })
    case "mcp_approval_request":
      return Result.map(decodeApproval({ ...raw, id }, line, "mcp_approval_request item"), (request) => {
        const rest = Object.fromEntries(
          Object.entries(raw).filter(([field]) => !["type", "id", "name", "arguments", "server_label"].includes(field))
        )
        const item: OutputItem.ApprovalRequestItem = {
          type: "approval_request",
          id,
          provider_id: raw.id ?? id,
          ...(request.server_label === undefined ? {} : { server_label: request.server_label }),
          name: request.name,
          arguments: request.arguments,
          ...(Object.keys(rest).length > 0 ? { provider_metadata: rest } : {})
        }
        return { item, refusal: undefined }
      })
    default: {
      if (isProviderOutput(raw)) {
        const item: OutputItem.FunctionCallOutputItem = {
          type: "function_call_output",
          id,
          call_id: stringField(raw, "call_id") ?? callId ?? raw.id ?? id,
          output: outputText(raw),
          success: raw.status !== "incomplete" && raw.status !== "failed",
          provider_executed: true,
          provider_metadata: { type: raw.type, item: raw }
        }
        return Result.succeed({ item, refusal: undefined })
      }
      const hosted = HostedTools.split(raw, id, callName(raw))
      if (hosted !== undefined) return Result.succeed({ item: hosted.call, refusal: undefined, result: hosted.result })
      const item: OutputItem.FunctionCallItem = {
        type: "function_call",
        id,
        call_id: callIdOf(raw, id),
        name: callName(raw),
        arguments: callArguments(raw, streamed),
        ...executedBy(raw, declared),
        provider_metadata: { type: raw.type, item: raw }
      }
      return Result.succeed({ item, refusal: undefined })
    }
  }
}

/**
 * The arguments of a cut-off call whose streamed text ends inside its last string field
 * (a custom tool's `{"input":"…`, a patch's `…"diff":"…`): that string closed, so the
 * text that arrived is valid JSON; any other text as it is.
 */
const closedString = (streamed: string): string => {
  if (streamed === "") return streamed
  const closed = `${streamed}"}`
  return Json.isObject(Json.parseOrUndefined(closed)) ? closed : streamed
}

/** The final form of an item that was cut off: what arrived, under the added item's fields. */
const partialItem = (
  added: RawOutputItem | undefined,
  id: string,
  content: string,
  declared: Declared
): OutputItem.OutputItem => {
  const type = added?.type ?? "message"
  if (type === "message") {
    const phase = added === undefined ? undefined : stringField(added, "phase")
    return {
      type: "message",
      id,
      content,
      origin: "agent",
      ...(phase === undefined ? {} : { provider_metadata: { phase } })
    }
  }
  if (type === "reasoning") {
    const encrypted = added === undefined ? undefined : stringField(added, "encrypted_content")
    return { type: "reasoning", id, content, ...(encrypted === undefined ? {} : { encrypted_content: encrypted }) }
  }
  if (added !== undefined && type === "compaction") {
    return { type: "compaction", id, content, provider_metadata: { type, item: added } }
  }
  if (added !== undefined && type === "mcp_approval_request") {
    return {
      type: "approval_request",
      id,
      provider_id: added.id ?? id,
      name: callName(added),
      arguments: stringField(added, "arguments") ?? content
    }
  }
  if (added !== undefined && isProviderOutput(added)) {
    return {
      type: "function_call_output",
      id,
      call_id: callIdOf(added, id),
      output: content,
      success: false,
      provider_executed: true,
      provider_metadata: { type, item: added }
    }
  }
  return {
    type: "function_call",
    id,
    call_id: (added && stringField(added, "call_id")) ?? added?.id ?? id,
    name: added === undefined ? type : callName(added),
    arguments: type === "custom_tool_call" || type === "apply_patch_call" ? closedString(content) : content,
    ...(added === undefined ? {} : executedBy(added, declared)),
    ...(added === undefined || type === "function_call" ? {} : { provider_metadata: { type, item: added } })
  }
}

// ---------------------------------------------------------------------------
// Reasoning text
// ---------------------------------------------------------------------------

/** A reasoning item's two kinds of text: `summary` parts and raw `reasoning_text` content parts. */
type PartKind = OutputItem.ReasoningKind

/**
 * The reasoning text of one item, part by part, as it stands. Every source of a part's
 * text (its deltas, its `.done` event, the content part's `.done`, the finished item)
 * folds into the same slot: a later whole text that extends what arrived adds only the
 * rest, and one that equals it adds nothing, so each piece of text counts once.
 *
 * Both kinds stream, each delta saying its kind (`reasoning_kind`); the item's content
 * is its parts in the order their text began, a blank line between parts.
 */
interface ReasoningText {
  /** each part's text, by `summary:<summary_index>` / `raw:<content_index>` */
  readonly parts: Map<string, string>
  /** the parts in the order their text began */
  readonly order: Array<{ readonly kind: PartKind; readonly slot: string }>
}

const emptyReasoning = (): ReasoningText => ({ parts: new Map(), order: [] })

/** The non-empty texts of one kind's parts, by index. */
const textsOf = (state: ReasoningText, kind: PartKind): Array<string> =>
  [...state.parts.entries()]
    .filter(([slot, text]) => slot.startsWith(`${kind}:`) && text !== "")
    .map(([slot, text]) => [Number(slot.slice(kind.length + 1)), text] as const)
    .sort(([a], [b]) => a - b)
    .map(([, text]) => text)

// ---------------------------------------------------------------------------
// The turn
// ---------------------------------------------------------------------------

interface ItemState {
  readonly added: RawOutputItem | undefined
  readonly reasoning: ReasoningText
}

/** The state of one turn, shared by the streaming handler and the non-streaming decoder. */
class ResponsesTurn {
  readonly builder: TurnBuilder.TurnBuilder
  private readonly items = new Map<string, ItemState>()
  private readonly finished = new Set<string>()
  /** the Sluice key of each provider item id that arrived after its item was opened under another */
  private readonly aliases = new Map<string, string>()
  /** the Sluice key of each `output_index` */
  private readonly byIndex = new Map<number, string>()
  /** items opened by an event that named neither an item nor an index, in order: the next item of their type claims them */
  private readonly anonymous: Array<string> = []
  /** the call id of the last provider-run tool search, for its output when that names none */
  private lastSearch: string | undefined
  private unnamed = 0
  /** the call ids of the calls the client must run, as the items stand */
  private readonly clientCalls = new Set<string>()
  private refusal: string | undefined
  private usage: Usage.Usage = Usage.empty
  /** the request's tool names: from the options, else from the response's echo of them */
  private declared: Declared
  private readonly declaredByOptions: boolean

  constructor(options: NormalizeOptions | undefined, now: () => number) {
    this.builder = new TurnBuilder.TurnBuilder({ providerId: provider, options, now })
    this.declared = options?.toolNames === undefined ? undefined : new Set(options.toolNames)
    this.declaredByOptions = this.declared !== undefined
  }

  get isOver(): boolean {
    return this.builder.isFinished
  }

  start(out: Out, response: Response): void {
    this.builder.start(out, response.model ?? undefined)
    if (!this.declaredByOptions) this.declared = declaredBy(response.tools) ?? this.declared
    if (response.usage !== undefined && response.usage !== null) this.usage = toUsage(response.usage)
  }

  private known(key: string): boolean {
    return this.builder.isOpen(key) || this.finished.has(key)
  }

  /**
   * The Sluice key of an item: by its provider id (or the id it is known under), else by
   * its `output_index` when an item of the same type was opened there without that id.
   */
  keyOf(raw: RawOutputItem, outputIndex: number | undefined): string | undefined {
    const id = raw.id
    if (id !== undefined) {
      const alias = this.aliases.get(id)
      if (alias !== undefined) return alias
      if (this.known(id)) return id
    }
    const indexed = outputIndex === undefined ? undefined : this.byIndex.get(outputIndex)
    if (indexed !== undefined && this.known(indexed) && this.items.get(indexed)?.added?.type === raw.type) {
      if (id !== undefined) this.aliases.set(id, indexed)
      return indexed
    }
    const position = this.anonymous.findIndex((key) => this.items.get(key)?.added?.type === raw.type)
    if (position !== -1 && id !== undefined) {
      const [claimed] = this.anonymous.splice(position, 1)
      this.aliases.set(id, claimed!)
      return claimed
    }
    return id
  }

  /** Opens an output item under its provider id (or the next `item_N`). */
  open(out: Out, raw: RawOutputItem, knownId?: string, outputIndex?: number): string {
    const id = knownId ?? this.keyOf(raw, outputIndex) ?? `item_${this.unnamed++}`
    if (outputIndex !== undefined && !this.byIndex.has(outputIndex)) this.byIndex.set(outputIndex, id)
    if (this.known(id)) return id
    const type = itemTypeOf(raw)
    if (isClientCall(raw, this.declared)) this.clientCalls.add(callIdOf(raw, id))
    if (raw.type === "tool_search_call" && isServerSearch(raw)) this.lastSearch = callIdOf(raw, id)
    const initial = type === "function_call" ? stringField(raw, "arguments") : undefined
    this.builder.openItem(out, type, {
      id,
      ...(type === "function_call" || type === "approval_request" ? { name: callName(raw) } : {}),
      ...(initial === undefined ? {} : { initial_content: initial })
    })
    this.items.set(id, { added: raw, reasoning: emptyReasoning() })
    return id
  }

  /**
   * The key a delta or `.done` event goes to: its `item_id` (or what that id is known
   * under), else the item at its `output_index`, else the last open item of the kind;
   * an item the stream never announced is opened as `fallback`.
   */
  target(out: Out, itemId: string | undefined, outputIndex: number | undefined, fallback: string): string {
    const probe: RawOutputItem = itemId === undefined ? { type: fallback } : { type: fallback, id: itemId }
    const key = this.keyOf(probe, outputIndex)
    if (key !== undefined && this.known(key)) return key
    if (itemId === undefined) {
      const indexed = outputIndex === undefined ? undefined : this.byIndex.get(outputIndex)
      if (indexed !== undefined && this.known(indexed)) return indexed
      const last = this.builder.lastOpen(itemTypeOf(probe))
      if (last !== undefined && outputIndex === undefined) return last.key
      if (outputIndex === undefined) {
        const opened = this.open(out, probe)
        this.anonymous.push(opened)
        return opened
      }
    }
    return this.open(out, probe, key, outputIndex)
  }

  /** A delta for an item. */
  delta(out: Out, key: string, text: string): void {
    if (this.finished.has(key)) return
    const type = this.items.get(key)?.added?.type
    const streamed = this.builder.content(key)
    this.builder.delta(
      out,
      key,
      type === "code_interpreter_call"
        ? HostedTools.codeDelta(streamed, text)
        : type === "custom_tool_call"
        ? HostedTools.stringDelta("input", streamed, text)
        : type === "apply_patch_call"
        ? HostedTools.patchDelta(this.items.get(key)?.added?.operation, streamed, text)
        : text
    )
  }

  /**
   * Reasoning text for one part of an item: a `delta` appends to the part, a `done`
   * gives the part's whole text. What a part gains streams, tagged with its kind; a
   * part's first text comes after a blank line when the item already has text.
   */
  reasoningText(out: Out, key: string, kind: PartKind, index: number, text: string, mode: "delta" | "done"): void {
    if (this.finished.has(key)) return
    const state = this.items.get(key)?.reasoning
    if (state === undefined) return
    const slot = `${kind}:${index}`
    const known = state.parts.get(slot) ?? ""
    if (mode === "done" && !text.startsWith(known)) {
      // a whole text that does not extend what streamed: the finished item keeps it
      state.parts.set(slot, text)
      return
    }
    const next = mode === "delta" ? known + text : text
    if (next.length > known.length) {
      if (known === "") {
        state.order.push({ kind, slot })
        if (this.builder.content(key) !== "") this.builder.delta(out, key, "\n\n", kind)
      }
      this.builder.delta(out, key, next.slice(known.length), kind)
    }
    state.parts.set(slot, next)
  }

  /**
   * The reasoning of an item as its parts stand: its content (the parts in the order
   * their text began; what streamed, unless a later whole text replaced a part), its
   * kind when it has text of one kind only, and both kinds' parts apart when it has both.
   */
  private reasoningOf(key: string): {
    readonly content: string
    readonly kind?: PartKind
    readonly apart?: Json.JsonObject
  } {
    const state = this.items.get(key)?.reasoning ?? emptyReasoning()
    const content = state.order.map(({ slot }) => state.parts.get(slot) ?? "").filter((text) => text !== "").join(
      "\n\n"
    )
    const summary = textsOf(state, "summary")
    const raw = textsOf(state, "raw")
    return {
      content: content === "" ? this.builder.content(key) : content,
      ...(summary.length > 0 && raw.length > 0
        ? { apart: { summary, reasoning_text: raw } }
        : summary.length > 0
        ? { kind: "summary" }
        : raw.length > 0
        ? { kind: "raw" }
        : {})
    }
  }

  /** The final form of an item that was cut off (see `partialItem`), its reasoning as its parts stand. */
  private partial(key: string): OutputItem.OutputItem {
    const item = partialItem(this.items.get(key)?.added, key, this.builder.content(key), this.declared)
    if (item.type !== "reasoning") return item
    const { apart, content, kind } = this.reasoningOf(key)
    return {
      ...item,
      content,
      ...(kind === undefined ? {} : { reasoning_kind: kind }),
      ...(apart === undefined ? {} : { provider_metadata: apart })
    }
  }

  /** The finished reasoning item, from the finished item's parts folded into what streamed. */
  private finalReasoning(
    out: Out,
    raw: RawOutputItem,
    key: string,
    line: number
  ): Result.Result<FinalItem, WireDecodeError> {
    return Result.map(decodeReasoning({ ...raw, id: key }, line, "reasoning item"), (reasoning) => {
      ;(reasoning.summary ?? []).forEach((part, index) =>
        this.reasoningText(out, key, "summary", index, part.text, "done")
      )
      ;(reasoning.content ?? []).forEach((part, index) => this.reasoningText(out, key, "raw", index, part.text, "done"))
      const { apart, content, kind } = this.reasoningOf(key)
      const item: OutputItem.ReasoningItem = {
        type: "reasoning",
        id: key,
        content,
        ...(kind === undefined ? {} : { reasoning_kind: kind }),
        ...(typeof reasoning.encrypted_content === "string" ? { encrypted_content: reasoning.encrypted_content } : {}),
        ...(apart === undefined ? {} : { provider_metadata: apart })
      }
      return { item, refusal: undefined }
    })
  }

  /** An output item is finished. */
  done(
    out: Out,
    raw: RawOutputItem,
    line: number,
    knownId?: string,
    outputIndex?: number
  ): WireDecodeError | undefined {
    const id = this.open(out, raw, knownId, outputIndex)
    if (this.finished.has(id)) return undefined
    const final = raw.type === "reasoning"
      ? this.finalReasoning(out, raw, id, line)
      : finalItem(
        raw,
        id,
        this.builder.content(id),
        line,
        isProviderOutput(raw) ? this.lastSearch : undefined,
        this.declared
      )
    if (Result.isFailure(final)) return final.failure
    // the finished item decides (a shell's environment may come only with it), and a
    // result OpenAI reported in the turn means OpenAI ran the call
    const item = final.success.item
    if (isClientCall(raw, this.declared)) this.clientCalls.add(callIdOf(raw, id))
    else if (item.type === "function_call") this.clientCalls.delete(item.call_id)
    if (item.type === "function_call_output" && item.provider_executed === true) this.clientCalls.delete(item.call_id)
    if (final.success.refusal !== undefined) this.refusal = (this.refusal ?? "") + final.success.refusal
    this.builder.done(out, id, final.success.item)
    this.finished.add(id)
    const result = final.success.result
    if (result !== undefined) {
      this.builder.openItem(out, "function_call_output", { id: result.id })
      this.builder.delta(out, result.id, result.output)
      this.builder.done(out, result.id, result)
    }
    return undefined
  }

  /** Closes every open item with what it received. */
  private closeOpen(out: Out): void {
    for (const id of this.builder.openItems()) {
      this.builder.done(out, id, this.partial(id))
      this.finished.add(id)
    }
  }

  /**
   * The response is over (`response.completed`, `.incomplete`, `.failed`, or a
   * non-streaming body): emits the items the stream did not finish, then the end.
   */
  end(out: Out, response: Response, line: number): WireDecodeError | undefined {
    this.start(out, response)
    const output = response.output ?? []
    for (let position = 0; position < output.length; position++) {
      const raw = output[position]!
      const key = this.keyOf(raw, position)
      if (key !== undefined && this.finished.has(key)) continue
      const opened = this.open(out, raw, key, position)
      if (raw.type !== "reasoning" && raw.type !== "mcp_approval_request") {
        const final = finalItem(raw, opened, this.builder.content(opened), line, this.lastSearch, this.declared)
        if (Result.isFailure(final)) return final.failure
        this.builder.delta(
          out,
          opened,
          OutputItem.streamedContent(final.success.item).slice(this.builder.content(opened).length)
        )
      }
      const failure = this.done(out, raw, line, opened, position)
      if (failure !== undefined) return failure
    }
    this.closeOpen(out)
    const usage = this.usage
    const status = response.status ??
      (response.error ? "failed" : response.incomplete_details ? "incomplete" : "completed")
    if (status === "failed" || (response.error !== undefined && response.error !== null)) {
      const details = response.error
      const code = details?.code ?? details?.type ?? "response_failed"
      const error = classifyError(code, details?.message ?? "the response failed", details ?? undefined)
      finishWith(this.builder, out, {
        finishReason: error.type === "content_blocked" ? "content-filter" : "error",
        usage,
        error,
        raw: details ?? undefined
      })
    } else if (status === "incomplete") {
      const reason = response.incomplete_details?.reason ?? "unknown"
      if (reason === "max_output_tokens") finishWith(this.builder, out, { finishReason: "length", usage })
      else if (reason === "content_filter") {
        const error = ErrorClassification.contentBlocked(
          "content_filter",
          "the response was stopped by the content filter"
        )
        finishWith(this.builder, out, { finishReason: "content-filter", usage, error })
      } else finishWith(this.builder, out, { finishReason: "other", usage })
    } else if (status === "completed") {
      if (this.refusal !== undefined) {
        const error = ErrorClassification.contentBlocked("refusal", this.refusal)
        finishWith(this.builder, out, { finishReason: "content-filter", usage, error })
      } else finishWith(this.builder, out, { finishReason: this.clientCalls.size > 0 ? "tool-calls" : "stop", usage })
    } else {
      const error = ErrorClassification.make(
        "api_error",
        `response_${status}`,
        `the response ended with status ${status}`,
        {
          retryable: status !== "cancelled"
        }
      )
      finishWith(this.builder, out, { finishReason: "error", usage, error })
    }
    return undefined
  }

  /** An `error` event: the turn ends with it (`raw`: the event as it came). */
  fail(out: Out, error: ProviderError.ProviderError, raw?: Json.JsonValue): void {
    this.closeOpen(out)
    finishWith(this.builder, out, { finishReason: "error", usage: this.usage, error, raw })
  }

  /** The input ended without a terminal event. */
  truncate(out: Out): void {
    endTruncated(
      this.builder,
      out,
      provider,
      (id) => this.partial(id),
      this.usage
    )
  }
}

const deltaFallback: Record<string, string> = {
  "response.output_text.delta": "message",
  "response.refusal.delta": "message",
  "response.function_call_arguments.delta": "function_call",
  "response.custom_tool_call_input.delta": "custom_tool_call",
  "response.apply_patch_call_operation_diff.delta": "apply_patch_call",
  "response.mcp_call_arguments.delta": "mcp_call",
  "response.code_interpreter_call_code.delta": "code_interpreter_call"
}

// an event the stream's order does not allow where it came (WireDecodeError `InvalidOrder`)
const outOfOrder = (line: number, message: string): WireDecodeError =>
  new WireDecodeError({
    provider,
    line,
    reason: "InvalidOrder",
    message: `${provider} event at line ${line}: ${message}`
  })

const makeHandler = (options: NormalizeOptions | undefined) => (now: () => number): Handler => {
  const turn = new ResponsesTurn(options, now)
  // the line of `response.created`, and the event that ended the response and its line,
  // once they came: nothing may repeat the one or follow the other
  let createdLine: number | undefined
  let ended: { readonly type: string; readonly line: number } | undefined
  // `[DONE]` came (OpenRouter's Responses endpoint ends with it): the body is over
  let closed = false
  return {
    onEvent: (event, out) => {
      // after an `error` event, which ends the turn, the rest is ignored; so is what follows `[DONE]`
      if (closed || (ended === undefined && turn.isOver)) return undefined
      if (isDoneSentinel(event.data)) {
        closed = true
        // before a terminal event, the sentinel ends the body as a cut-off stream would end
        if (!turn.isOver) turn.truncate(out)
        return undefined
      }
      const json = parseJson(provider, event.data, event.line)
      if (Result.isFailure(json)) return json.failure
      const head = decodeEventType(json.success, event.line, "event")
      if (Result.isFailure(head)) return head.failure
      const type = head.success.type
      if (ended !== undefined) return outOfOrder(event.line, `${type} after ${ended.type} (line ${ended.line})`)
      if (type === "response.created") {
        if (createdLine !== undefined) {
          return outOfOrder(event.line, `a second response.created (the response was created at line ${createdLine})`)
        }
        createdLine = event.line
      }
      const what = `${type} event`
      switch (type) {
        case "response.created":
        case "response.in_progress":
        case "response.queued": {
          const decoded = decodeLifecycle(json.success, event.line, what)
          if (Result.isFailure(decoded)) return decoded.failure
          turn.start(out, decoded.success.response)
          return undefined
        }
        case "response.completed":
        case "response.incomplete":
        case "response.failed": {
          const decoded = decodeLifecycle(json.success, event.line, what)
          if (Result.isFailure(decoded)) return decoded.failure
          const status = type === "response.completed"
            ? "completed"
            : type === "response.incomplete"
            ? "incomplete"
            : "failed"
          ended = { type, line: event.line }
          return turn.end(out, { ...decoded.success.response, status }, event.line)
        }
        case "response.output_item.added":
        case "response.output_item.done": {
          const decoded = decodeOutputItemEvent(json.success, event.line, what)
          if (Result.isFailure(decoded)) return decoded.failure
          const index = decoded.success.output_index ?? undefined
          if (type === "response.output_item.added") {
            turn.open(out, decoded.success.item, undefined, index)
            return undefined
          }
          return turn.done(out, decoded.success.item, event.line, undefined, index)
        }
        case "response.reasoning_summary_part.added":
        case "response.reasoning_summary_part.done":
        case "response.reasoning_summary_text.delta":
        case "response.reasoning_summary_text.done":
        case "response.reasoning_text.delta":
        case "response.reasoning_text.done":
        case "response.content_part.done": {
          const decoded = decodeReasoningEvent(json.success, event.line, what)
          if (Result.isFailure(decoded)) return decoded.failure
          const e = decoded.success
          if (type === "response.content_part.done" && e.part?.type !== "reasoning_text") return undefined
          const raw = type.startsWith("response.reasoning_text") || type === "response.content_part.done"
          const text = type.endsWith(".delta") ? e.delta : e.text ?? e.part?.text
          if (text === undefined || text === null) {
            if (type.endsWith(".delta")) {
              return new WireDecodeError({
                provider,
                line: event.line,
                reason: "UnexpectedShape",
                message: `${provider} ${what} at line ${event.line} has no delta`
              })
            }
            return undefined
          }
          const key = turn.target(out, e.item_id ?? undefined, e.output_index ?? undefined, "reasoning")
          turn.reasoningText(
            out,
            key,
            raw ? "raw" : "summary",
            (raw ? e.content_index : e.summary_index) ?? 0,
            text,
            type.endsWith(".delta") ? "delta" : "done"
          )
          return undefined
        }
        case "error": {
          const decoded = decodeErrorEvent(json.success, event.line, what)
          if (Result.isFailure(decoded)) return decoded.failure
          const nested = decoded.success.error
          const code = decoded.success.code ?? nested?.code ?? nested?.type ?? "error"
          const message = decoded.success.message ?? nested?.message ?? "the provider reported an error"
          turn.fail(out, classifyError(code, message, json.success), isJson(json.success) ? json.success : undefined)
          return undefined
        }
        default: {
          const fallback = deltaFallback[type]
          if (fallback === undefined) return undefined
          const decoded = decodeDelta(json.success, event.line, what)
          if (Result.isFailure(decoded)) return decoded.failure
          const { delta, item_id, output_index } = decoded.success
          turn.delta(out, turn.target(out, item_id ?? undefined, output_index ?? undefined, fallback), delta)
          return undefined
        }
      }
    },
    onEnd: (out) => turn.truncate(out)
  }
}

/**
 * Normalizes a Responses API event stream. The turn ends at `response.completed`,
 * `response.incomplete`, `response.failed` or an `error` event; a stream that stops
 * before any of them ends with a retryable `stream_truncated` error, keeping what
 * arrived. A `data: [DONE]` line (OpenRouter's Responses endpoint ends with one, as
 * Chat Completions streams do) ends the body: what follows it is ignored. A second `response.created`, and any event after `response.completed`,
 * `response.incomplete` or `response.failed`, fail with `WireDecodeError`
 * `InvalidOrder` naming the event (events after an `error` event are ignored).
 *
 * @since 0.1.0
 * @category normalizing
 */
export const normalize: Normalize = (options) => normalizeWith(makeHandler(options))

/**
 * `normalize` with the SSE framing in the same step, from the body's bytes.
 *
 * @since 0.3.0
 * @category normalizing
 */
export const decodeSse: DecodeSse = (options, sse) => decodeSseWith(makeHandler(options), sse)

/**
 * Decodes a non-streaming Responses API body (the `response` object, or an error body
 * `{"error": {...}}`) into the events the stream of the same response gives.
 *
 * @since 0.1.0
 * @category normalizing
 */
export const normalizeResponse: NormalizeResponse = (body, options) =>
  Effect.clockWith((clock) =>
    Effect.suspend(() => {
      const response = decodeResponse(body, 0, "body")
      if (Result.isFailure(response)) return Effect.fail(response.failure)
      const turn = new ResponsesTurn(options, () => clock.currentTimeMillisUnsafe())
      const out: Out = []
      turn.start(out, response.success)
      const failure = turn.end(out, response.success, 0)
      return failure === undefined ? Effect.succeed(out) : Effect.fail(failure)
    })
  )
