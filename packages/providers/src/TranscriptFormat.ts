/**
 * Which wire format a recorded transcript looks like, told from its first payloads:
 * an SSE body (`event:` names, `data:` JSON), a JSON-lines file or one JSON document.
 * For saying plainly that a transcript was given with the wrong `--provider`.
 *
 * @since 0.1.0
 */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { ProviderName } from "./ProviderName.js"

/**
 * The formats told apart: the four wire APIs, and the AI SDK's UI message stream parts.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TranscriptFormat = Schema.Literals(["openai-chat", "openai-responses", "anthropic", "gemini", "ai-sdk"])

/**
 * @since 0.1.0
 * @category models
 */
export type TranscriptFormat = typeof TranscriptFormat.Type

const labels: Record<TranscriptFormat, string> = {
  "openai-chat": "an OpenAI Chat Completions stream",
  "openai-responses": "an OpenAI Responses stream",
  anthropic: "an Anthropic Messages stream",
  gemini: "a Gemini generateContent stream",
  "ai-sdk": "AI SDK stream parts"
}

/**
 * How a format is named to people, as in "looks like an Anthropic Messages stream".
 *
 * @since 0.1.0
 * @category formatting
 */
export const label = (format: TranscriptFormat): string => labels[format]

/**
 * The format a provider's normalizer reads (`openai-compatible` reads OpenAI Chat's).
 *
 * @since 0.1.0
 * @category formats
 */
export const ofProvider = (
  provider: ProviderName
): TranscriptFormat => (provider === "openai-compatible" ? "openai-chat" : provider)

const anthropicTypes = new Set([
  "message_start",
  "message_delta",
  "message_stop",
  "content_block_start",
  "content_block_delta",
  "content_block_stop"
])

// The AI SDK's stream part types: text, reasoning and tool-input deltas, steps, tool outcomes.
const aiSdkType =
  /^(?:(?:text|reasoning|tool-input)-(?:start|delta|end)|(?:start|finish)-step|tool-(?:call|result|error|input-available|output-available)|response-metadata)$/

/** The format of one event name or JSON payload, when it names one. */
const ofType = (type: string): TranscriptFormat | undefined =>
  anthropicTypes.has(type)
    ? "anthropic"
    : type.startsWith("response.")
    ? "openai-responses"
    : aiSdkType.test(type)
    ? "ai-sdk"
    : undefined

const isObject = (value: unknown): value is { readonly [key: string]: unknown } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

// Gemini's error body: `{"error": {"code": 503, "status": "UNAVAILABLE", ...}}`.
const isGeminiError = (error: unknown): boolean =>
  isObject(error) && typeof error["code"] === "number" && typeof error["status"] === "string"

const ofPayload = (value: unknown): TranscriptFormat | undefined => {
  // a non-streaming Gemini body may be the array of its chunks
  if (Array.isArray(value)) return ofPayload(value[0])
  if (!isObject(value)) return undefined
  const fields = value
  const type = fields["type"]
  const object = fields["object"]
  if (object === "chat.completion.chunk" || object === "chat.completion" || Array.isArray(fields["choices"])) {
    return "openai-chat"
  }
  if (object === "response") return "openai-responses"
  if (
    ["candidates", "usageMetadata", "promptFeedback"].some((key) => isObject(fields[key]) || Array.isArray(fields[key]))
  ) return "gemini"
  if (isGeminiError(fields["error"])) return "gemini"
  if (type === "message" && Array.isArray(fields["content"])) return "anthropic"
  return typeof type === "string" ? ofType(type) : undefined
}

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/**
 * The format `text` looks like, judged by its first payload that names one; `None`
 * when nothing in it does.
 *
 * @since 0.1.0
 * @category detecting
 */
export const detect = (text: string): Option.Option<TranscriptFormat> => {
  const lines = text.split(/\r?\n/)
  const sse = lines.some((line) => line.startsWith("data:") || line.startsWith("event:"))
  if (!sse) {
    const whole = ofPayload(parse(text))
    if (whole !== undefined) return Option.some(whole)
  }
  for (const line of lines) {
    const found = line.startsWith("event:")
      ? ofType(line.slice(6).trim())
      : ofPayload(parse(line.startsWith("data:") ? line.slice(5).trim() : line))
    if (found !== undefined) return Option.some(found)
  }
  return Option.none()
}
