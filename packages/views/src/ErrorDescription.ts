/**
 * A provider failure told to a user (docs/errors.md#error-descriptions): for a
 * `ProviderError` (or its wire form, a `response_error`'s `ErrorObject`) of a given
 * provider, what happened, whether trying again may help, and the provider's own
 * advice: Anthropic's overload (HTTP 529) is Anthropic's load and not the caller's
 * limits, an OpenAI `insufficient_quota` needs billing rather than a retry, a Gemini
 * safety block names the filter that fired. The text is for people; programs decide
 * from `retryable`, `type` and `code`.
 *
 * @since 0.3.0
 */
import { ProviderError, type StreamEvent } from "@sluice/core"
import { type ProviderName, Providers } from "@sluice/providers"

/**
 * What a user is told about a failure.
 *
 * - `title`: one line, what happened;
 * - `explanation`: why, in the provider's terms;
 * - `retryable` and `retry`: whether the same request may succeed later, and when;
 * - `hint`: what to do about it, specific to the provider (`undefined` when there is
 *   nothing beyond the retry advice);
 * - `detail`: the provider's own message and code, for a support request;
 * - `text`: all of it as one paragraph.
 *
 * @since 0.3.0
 * @category models
 */
export interface ErrorDescription {
  readonly provider: ProviderName.ProviderName
  readonly title: string
  readonly explanation: string
  readonly retryable: boolean
  readonly retry: string
  readonly hint: string | undefined
  readonly detail: string
  readonly text: string
}

/**
 * What `createErrorDescription` describes: a `ProviderError`, or the `ErrorObject` of a
 * `response_error` / `item_error` event.
 *
 * @since 0.3.0
 * @category models
 */
export type DescribedError = ProviderError.ProviderError | StreamEvent.ErrorObject

/**
 * The name users know a provider by: `OpenAI` (Chat and Responses), `Anthropic`,
 * `Gemini`, and `the model server` for an OpenAI-compatible server (it may be any
 * vendor's).
 *
 * @since 0.3.0
 * @category getters
 */
export const displayName = (provider: ProviderName.ProviderName): string => {
  switch (provider) {
    case "openai-chat":
    case "openai-responses":
      return "OpenAI"
    case "openai-compatible":
      return "The model server"
    case "anthropic":
      return "Anthropic"
    case "gemini":
      return "Gemini"
  }
}

type Family = "openai" | "compatible" | "anthropic" | "gemini"

const familyOf = (provider: ProviderName.ProviderName): Family =>
  provider === "anthropic" ? "anthropic" : provider === "gemini" ? "gemini" : provider === "openai-compatible"
    ? "compatible"
    : "openai"

interface Fields {
  readonly type: ProviderError.ProviderErrorType
  readonly retryable: boolean
  readonly code: string
  readonly message: string
  readonly status: number | undefined
  readonly retryAfterMs: number | undefined
}

const fieldsOf = (error: DescribedError): Fields =>
  error instanceof ProviderError.ProviderError
    ? {
      type: error.type,
      retryable: error.retryable,
      code: error.code,
      message: error.message,
      status: error.status,
      retryAfterMs: error.retryAfterMs
    }
    : {
      type: error.type ?? "api_error",
      retryable: error.retryable ?? false,
      code: error.code,
      message: error.message,
      status: error.status,
      retryAfterMs: error.retry_after_ms
    }

const seconds = (ms: number): string => {
  const value = Math.max(1, Math.ceil(ms / 1000))
  return value === 1 ? "1 second" : `${value} seconds`
}

/** The title, explanation and hint of one failure. */
interface Told {
  readonly title: string
  readonly explanation: string
  readonly hint?: string | undefined
}

/** Gemini's block reasons and safety finish reasons, in users' words. */
const geminiBlocks: Readonly<Record<string, string>> = {
  SAFETY: "its safety filters judged the content harmful",
  IMAGE_SAFETY: "its safety filters judged a generated image harmful",
  PROHIBITED_CONTENT: "the content is prohibited by Google's usage policies",
  IMAGE_PROHIBITED_CONTENT: "a generated image is prohibited by Google's usage policies",
  BLOCKLIST: "the content contains terms on a blocklist",
  SPII: "the content may contain sensitive personal information",
  RECITATION: "the answer repeated existing material too closely (recitation)",
  IMAGE_RECITATION: "a generated image repeated existing material too closely (recitation)",
  LANGUAGE: "the prompt is in a language Gemini does not support",
  OTHER: "of a reason Gemini does not name"
}

const contentBlocked = (family: Family, name: string, fields: Fields): Told => {
  const code = fields.code
  if (code === "refusal") {
    return family === "anthropic"
      ? {
        title: "Claude declined to answer",
        explanation: "Anthropic stopped the response because the model refused to continue (stop reason `refusal`).",
        hint: "Rephrase the request or start a new conversation; the same request will most likely be refused again."
      }
      : {
        title: `The model declined to answer`,
        explanation: `${name}'s model refused the request: ${fields.message}`,
        hint: "Rephrase the request; the same request will most likely be refused again."
      }
  }
  if (family === "gemini") {
    const upper = code.toUpperCase()
    const reason = geminiBlocks[upper]
    const prompt = /prompt/i.test(fields.message)
    return {
      title: prompt ? "Gemini blocked the prompt" : "Gemini blocked the response",
      explanation: `Gemini ${prompt ? "refused the prompt" : "stopped the answer"} because ${
        reason ?? `of its content filters (${code})`
      }.`,
      hint: upper === "SAFETY" || upper === "IMAGE_SAFETY"
        ? "Rephrase the request. How strict the harm filters are is set by the request's `safetySettings`; blocks for prohibited content or child safety cannot be turned off."
        : upper === "RECITATION"
        ? "Ask for the content in your own framing (a summary or a paraphrase) rather than verbatim."
        : upper === "PROHIBITED_CONTENT" || upper === "BLOCKLIST" || upper === "SPII"
        ? "Remove the flagged content from the request; this block cannot be turned off with safety settings."
        : "Rephrase the request."
    }
  }
  if (family === "anthropic") {
    return {
      title: "Anthropic blocked the request",
      explanation: `Anthropic's usage policy filters stopped it: ${fields.message}`,
      hint: "Rephrase the request; the same request will be blocked again."
    }
  }
  return {
    title: `${name}'s content filter blocked the response`,
    explanation: `The request or the answer was flagged by the content policy (${code}).`,
    hint: family === "openai"
      ? "Rephrase the request. OpenAI's usage policies (and, on Azure OpenAI, the deployment's content filter) decide what is blocked; the same request will be blocked again."
      : "Rephrase the request; the same request will be blocked again."
  }
}

const overloaded = (family: Family, name: string): Told => {
  switch (family) {
    case "anthropic":
      return {
        title: "Anthropic is overloaded",
        explanation:
          "Anthropic's API is temporarily overloaded (`overloaded_error`, HTTP 529). This is load on Anthropic's side across all its users, not your request and not your rate limits.",
        hint:
          "Wait a little and try again, or switch to another Claude model; status.anthropic.com shows ongoing incidents."
      }
    case "gemini":
      return {
        title: "Gemini is overloaded",
        explanation: "The Gemini model is temporarily unavailable or overloaded (`UNAVAILABLE`, HTTP 503).",
        hint: "Try again later, or switch to another Gemini model (a Flash model is often less loaded)."
      }
    case "openai":
      return {
        title: "OpenAI is overloaded",
        explanation: "OpenAI's servers are under heavy load and asked clients to slow down (HTTP 503).",
        hint: "Try again shortly; if it keeps happening, lower the request rate or check status.openai.com."
      }
    case "compatible":
      return {
        title: `${name} is overloaded`,
        explanation: `${name} is temporarily out of capacity.`,
        hint: "Try again shortly, or pick another model or server."
      }
  }
}

const rateLimited = (family: Family, name: string, fields: Fields): Told => {
  if (fields.code === ProviderError.insufficientQuota) {
    return family === "openai"
      ? {
        title: "The OpenAI account is out of quota",
        explanation:
          "OpenAI answered `insufficient_quota`: the organization of the API key has used up its quota or credit.",
        hint:
          "Check the plan and billing details of the key's organization on platform.openai.com (add credit or raise the usage limit); retrying will not help until then."
      }
      : {
        title: `The ${name === "The model server" ? "model server's" : `${name}`} quota is used up`,
        explanation: "The account's quota or credit is gone.",
        hint: "Add credit or raise the quota with the provider; retrying will not help until then."
      }
  }
  switch (family) {
    case "anthropic":
      return {
        title: "Anthropic's rate limit was reached",
        explanation:
          "Anthropic refused the request because the organization sent too many requests or tokens in a short time (`rate_limit_error`, HTTP 429).",
        hint:
          "Limits are per organization and model; the `anthropic-ratelimit-*` response headers and the Console's Limits page show them. Send fewer or smaller requests, or ask for a higher usage tier."
      }
    case "gemini": {
      const daily = /per ?day|daily/i.test(fields.message)
      return {
        title: "Gemini's quota was exceeded",
        explanation: `Gemini answered \`RESOURCE_EXHAUSTED\` (HTTP 429): the project's ${
          daily ? "daily" : "per-minute"
        } quota of requests or tokens is used up.`,
        hint: daily
          ? "A daily quota only comes back when it resets; free-tier keys have low limits. Check the quotas in Google AI Studio, or enable billing for higher ones."
          : "Wait a minute and try again; free-tier keys have low per-minute limits (see Google AI Studio for the project's quotas)."
      }
    }
    case "openai":
      return {
        title: "OpenAI's rate limit was reached",
        explanation: "OpenAI refused the request because too many requests or tokens were sent per minute (HTTP 429).",
        hint: "Send fewer requests or tokens per minute; the organization's limits are on platform.openai.com (Limits)."
      }
    case "compatible":
      return {
        title: `${name} is rate limiting`,
        explanation: `${name} refused the request because too many were sent in a short time (HTTP 429).`,
        hint: "Wait and try again with fewer requests."
      }
  }
}

const timedOut = (name: string, fields: Fields): Told =>
  fields.code === "stream_idle_timeout"
    ? {
      title: `${name} stopped sending`,
      explanation: `${name} sent nothing for too long in the middle of its answer, so the request was given up.`,
      hint: "A reasoning model may think for minutes before it writes; raise the idle timeout if this model needs it."
    }
    : {
      title: `${name} did not answer in time`,
      explanation: `${name} took too long to answer (${fields.code}).`
    }

const keyHint = (provider: ProviderName.ProviderName, family: Family): string => {
  const variable = Providers.apiKeyVariable(provider)
  switch (family) {
    case "anthropic":
      return `Check the key in \`${variable}\`: Anthropic keys start with \`sk-ant-\` and are managed in the Anthropic Console.`
    case "gemini":
      return `Check the key in \`${variable}\` (created in Google AI Studio) and that the Generative Language API is enabled for its project.`
    case "openai":
      return `Check the key in \`${variable}\` and the organization and project it belongs to (platform.openai.com, API keys).`
    case "compatible":
      return `Check the key in \`${variable}\` and the base URL of the server.`
  }
}

/** Gemini's finish reasons of a failed answer (retryable `api_error`s). */
const geminiFailures: ReadonlySet<string> = new Set([
  "MALFORMED_FUNCTION_CALL",
  "UNEXPECTED_TOOL_CALL",
  "TOO_MANY_TOOL_CALLS",
  "MISSING_THOUGHT_SIGNATURE",
  "MALFORMED_RESPONSE"
])

const apiError = (provider: ProviderName.ProviderName, family: Family, name: string, fields: Fields): Told => {
  const code = fields.code
  const lower = code.toLowerCase()
  const status = fields.status
  if (code === ProviderError.contextLengthExceeded) {
    return {
      title: "The conversation is too long for the model",
      explanation: `${name} refused the request because it does not fit the model's context window.`,
      hint:
        "Shorten or summarize the conversation (or drop large tool results), or choose a model with a larger context window."
    }
  }
  if (code === "stream_truncated") {
    return {
      title: `The answer from ${name} was cut off`,
      explanation: `The connection to ${name} ended before the answer was complete; what arrived was kept.`
    }
  }
  if (code === "connection_error") {
    return {
      title: `${name} could not be reached`,
      explanation:
        `The request to ${name} failed before an answer arrived (a network or DNS failure, or a refused connection).`,
      hint: family === "compatible" ? "Check the server's base URL and that it is running." : undefined
    }
  }
  if (
    status === 401 || lower === "authentication_error" || lower === "invalid_api_key" || lower === "unauthenticated" ||
    /api key not valid|invalid (x-)?api[- ]key|incorrect api key/i.test(fields.message)
  ) {
    return {
      title: `${name} rejected the API key`,
      explanation: `${name} did not accept the API key the request was sent with.`,
      hint: keyHint(provider, family)
    }
  }
  if (/credit balance|billing|location is not supported/i.test(`${code} ${fields.message}`)) {
    return {
      title: `The ${family === "anthropic" ? "Anthropic" : name} account needs billing`,
      explanation: fields.message,
      hint: family === "anthropic"
        ? "Add credit under Plans & Billing in the Anthropic Console."
        : family === "gemini"
        ? "Enable billing for the key's Google Cloud project (the free tier is not offered in every region)."
        : "Check the account's billing settings with the provider."
    }
  }
  if (status === 403 || lower === "permission_error" || lower === "permission_denied") {
    return {
      title: `${name} refused access`,
      explanation: `The API key is valid but may not use this model or resource: ${fields.message}`,
      hint: keyHint(provider, family)
    }
  }
  if (status === 404 || lower === "not_found_error" || lower === "not_found" || lower === "model_not_found") {
    return {
      title: `${name} does not know the model`,
      explanation:
        `${name} answered that the model or endpoint does not exist, or the key has no access to it: ${fields.message}`,
      hint: "Check the model id (and, for a compatible server, the base URL)."
    }
  }
  if (status === 413 || lower === "request_too_large") {
    return {
      title: "The request is too large",
      explanation: `${name} refused the request because its body is too big.`,
      hint: "Send fewer or smaller attachments and tool results."
    }
  }
  if (family === "gemini" && geminiFailures.has(code)) {
    return {
      title: "Gemini stopped the answer",
      explanation: `Gemini ended the response with \`${code}\`: the model produced ${
        code === "MISSING_THOUGHT_SIGNATURE"
          ? "a turn without the thought signature it needs back"
          : "output it could not finish"
      }.`,
      hint: code === "MALFORMED_FUNCTION_CALL" || code === "UNEXPECTED_TOOL_CALL"
        ? "The model wrote a tool call that does not match the declared tools; try again, or simplify the tools' parameters."
        : code === "TOO_MANY_TOOL_CALLS"
        ? "The model called too many tools in one turn; ask for fewer steps at a time."
        : undefined
    }
  }
  if (fields.retryable) {
    return {
      title: `${name} had an internal error`,
      explanation: `${name} failed on its side (${code}${status === undefined ? "" : `, HTTP ${status}`}).`
    }
  }
  return {
    title: `${name} rejected the request`,
    explanation: `${name} answered that the request is invalid: ${fields.message}`,
    hint: "Change the request (its model, options or messages); the same request will fail the same way."
  }
}

const retryAdvice = (fields: Fields): string => {
  if (!fields.retryable) return "Trying the same request again will not help."
  if (fields.retryAfterMs !== undefined) return `Try again in ${seconds(fields.retryAfterMs)}.`
  return "This is usually temporary: try again in a moment."
}

/**
 * Describes a provider failure for a user (the first design's `createErrorDescription`): what
 * happened, whether to try again (and when, from the provider's `Retry-After`), and the
 * provider's own advice, from the error's `type`, `code` and status. The description
 * never contradicts `retryable`.
 *
 * | type | Anthropic | OpenAI | Gemini |
 * |---|---|---|---|
 * | `provider_overloaded` | overloaded (529): Anthropic's load, not your limits | 503 slow down | `UNAVAILABLE`: try another model |
 * | `rate_limit` | per-organization limits, `anthropic-ratelimit-*` headers | `insufficient_quota`: billing, no retry; else per-minute limits | `RESOURCE_EXHAUSTED`: per-minute or daily quota |
 * | `content_blocked` | `refusal` | content filter / usage policies | the block reason (`SAFETY`, `PROHIBITED_CONTENT`, `RECITATION`, ...) and whether `safetySettings` can change it |
 * | `timeout` | no answer, or the body went quiet | same | same |
 * | `api_error` | context window, API key (names the key's variable), billing, model not found, server error, cut-off stream | same | same |
 *
 * @since 0.3.0
 * @category constructors
 */
export const createErrorDescription = (
  error: DescribedError,
  provider: ProviderName.ProviderName
): ErrorDescription => {
  const fields = fieldsOf(error)
  const family = familyOf(provider)
  const name = displayName(provider)
  const told = fields.type === "content_blocked"
    ? contentBlocked(family, name, fields)
    : fields.type === "provider_overloaded"
    ? overloaded(family, name)
    : fields.type === "rate_limit"
    ? rateLimited(family, name, fields)
    : fields.type === "timeout"
    ? timedOut(name, fields)
    : apiError(provider, family, name, fields)
  const retry = retryAdvice(fields)
  const detail = `${name === "The model server" ? "the model server" : name} said: ${fields.message} (${fields.code}${
    fields.status === undefined ? "" : `, HTTP ${fields.status}`
  })`
  const hint = told.hint
  return {
    provider,
    title: told.title,
    explanation: told.explanation,
    retryable: fields.retryable,
    retry,
    hint,
    detail,
    text: [`${told.title}.`, told.explanation, retry, ...(hint === undefined ? [] : [hint])].join(" ")
  }
}
