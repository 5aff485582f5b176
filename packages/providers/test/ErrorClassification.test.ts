import { describe, expect, it } from "@effect/vitest"
import { ProviderError } from "@sluice/core"
import { Anthropic, ErrorClassification, Gemini, OpenAiChat, OpenAiResponses } from "../src/index.js"

type Row = readonly [
  provider: string,
  status: number,
  body: unknown,
  type: ProviderError.ProviderErrorType,
  retryable: boolean,
  code: string
]

/**
 * Error bodies the providers answer a failed request with, per provider and status, and
 * what each must become. The bodies follow each provider's documented error shape.
 */
const rows: ReadonlyArray<Row> = [
  // OpenAI (Chat Completions and Responses share the error body)
  [
    "openai",
    429,
    {
      error: {
        message: "You exceeded your current quota, please check your plan and billing details.",
        type: "insufficient_quota",
        param: null,
        code: "insufficient_quota"
      }
    },
    "rate_limit",
    false,
    "insufficient_quota"
  ],
  [
    "openai",
    429,
    {
      error: {
        message: "Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000.",
        type: "tokens",
        param: null,
        code: "rate_limit_exceeded"
      }
    },
    "rate_limit",
    true,
    "rate_limit_exceeded"
  ],
  [
    "openai",
    400,
    {
      error: {
        message: "Your request was rejected as a result of our safety system.",
        type: "invalid_request_error",
        param: null,
        code: "content_policy_violation"
      }
    },
    "content_blocked",
    false,
    "content_policy_violation"
  ],
  [
    "openai",
    400,
    {
      error: {
        message:
          "This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens.",
        type: "invalid_request_error",
        param: "messages",
        code: "context_length_exceeded"
      }
    },
    "api_error",
    false,
    ProviderError.contextLengthExceeded
  ],
  [
    "openai",
    400,
    {
      error: {
        message: "Invalid value for 'model'.",
        type: "invalid_request_error",
        param: "model",
        code: "invalid_value"
      }
    },
    "api_error",
    false,
    "invalid_value"
  ],
  [
    "openai",
    401,
    {
      error: {
        message: "Incorrect API key provided.",
        type: "invalid_request_error",
        param: null,
        code: "invalid_api_key"
      }
    },
    "api_error",
    false,
    "invalid_api_key"
  ],
  [
    "openai",
    500,
    {
      error: {
        message: "The server had an error while processing your request.",
        type: "server_error",
        param: null,
        code: null
      }
    },
    "api_error",
    true,
    "server_error"
  ],
  [
    "openai",
    503,
    {
      error: {
        message: "The engine is currently overloaded, please try again later",
        type: "server_error",
        param: null,
        code: null
      }
    },
    "provider_overloaded",
    true,
    "server_error"
  ],
  // Azure OpenAI's content filter answers 400 with code content_filter
  [
    "azure-openai",
    400,
    {
      error: {
        message: "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.",
        type: null,
        param: "prompt",
        code: "content_filter",
        status: "400"
      }
    },
    "content_blocked",
    false,
    "content_filter"
  ],
  // Anthropic
  [
    "anthropic",
    529,
    { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
    "provider_overloaded",
    true,
    "overloaded_error"
  ],
  [
    "anthropic",
    429,
    {
      type: "error",
      error: {
        type: "rate_limit_error",
        message: "This request would exceed the rate limit for your organization of 40,000 input tokens per minute."
      }
    },
    "rate_limit",
    true,
    "rate_limit_error"
  ],
  [
    "anthropic",
    400,
    {
      type: "error",
      error: { type: "invalid_request_error", message: "prompt is too long: 208973 tokens > 200000 maximum" }
    },
    "api_error",
    false,
    ProviderError.contextLengthExceeded
  ],
  [
    "anthropic",
    400,
    {
      type: "error",
      error: {
        type: "invalid_request_error",
        message:
          "input length and `max_tokens` exceed context limit: 187254 + 20000 > 204798, decrease input length or `max_tokens` and try again"
      }
    },
    "api_error",
    false,
    ProviderError.contextLengthExceeded
  ],
  [
    "anthropic",
    400,
    { type: "error", error: { type: "invalid_request_error", message: "messages: roles must alternate" } },
    "api_error",
    false,
    "invalid_request_error"
  ],
  [
    "anthropic",
    400,
    {
      type: "error",
      error: { type: "invalid_request_error", message: "Your credit balance is too low to access the Anthropic API." }
    },
    "api_error",
    false,
    "invalid_request_error"
  ],
  [
    "anthropic",
    500,
    { type: "error", error: { type: "api_error", message: "Internal server error" } },
    "api_error",
    true,
    "api_error"
  ],
  [
    "anthropic",
    504,
    { type: "error", error: { type: "timeout_error", message: "Request timed out" } },
    "timeout",
    true,
    "timeout_error"
  ],
  // Gemini
  [
    "gemini",
    429,
    { error: { code: 429, message: "Resource has been exhausted (e.g. check quota).", status: "RESOURCE_EXHAUSTED" } },
    "rate_limit",
    true,
    "RESOURCE_EXHAUSTED"
  ],
  [
    "gemini",
    503,
    [{ error: { code: 503, message: "The model is overloaded. Please try again later.", status: "UNAVAILABLE" } }],
    "provider_overloaded",
    true,
    "UNAVAILABLE"
  ],
  [
    "gemini",
    400,
    {
      error: {
        code: 400,
        message: "The input token count (1200345) exceeds the maximum number of tokens allowed (1048576).",
        status: "INVALID_ARGUMENT"
      }
    },
    "api_error",
    false,
    ProviderError.contextLengthExceeded
  ],
  [
    "gemini",
    400,
    { error: { code: 400, message: "API key not valid. Please pass a valid API key.", status: "INVALID_ARGUMENT" } },
    "api_error",
    false,
    "INVALID_ARGUMENT"
  ],
  [
    "gemini",
    500,
    { error: { code: 500, message: "An internal error has occurred.", status: "INTERNAL" } },
    "api_error",
    true,
    "INTERNAL"
  ],
  [
    "gemini",
    504,
    { error: { code: 504, message: "Deadline exceeded", status: "DEADLINE_EXCEEDED" } },
    "timeout",
    true,
    "DEADLINE_EXCEEDED"
  ],
  // bodies that say nothing: the status decides
  ["any", 429, "", "rate_limit", true, "429"],
  ["any", 503, "<html>Service Unavailable</html>", "provider_overloaded", true, "503"],
  ["any", 502, "Bad Gateway", "api_error", true, "502"],
  ["any", 404, "{}", "api_error", false, "404"]
]

const text = (body: unknown) => (typeof body === "string" ? body : JSON.stringify(body))

describe("error classification: one classifier, body and status together", () => {
  it("classifies every provider's error body before the stream (ErrorClassification.fromHttpStatus)", () => {
    for (const [provider, status, body, type, retryable, code] of rows) {
      const error = ErrorClassification.fromHttpStatus(status, { body: text(body) })
      expect([provider, status, error.type, error.retryable, error.code, error.status]).toStrictEqual([
        provider,
        status,
        type,
        retryable,
        code,
        status
      ])
    }
  })

  it("keeps the body's message, or its text when it is not an error body", () => {
    expect(ErrorClassification.fromHttpStatus(529, { body: text(rows[9]![2]) }).message).toBe("Overloaded")
    expect(ErrorClassification.fromHttpStatus(502, { body: "Bad Gateway" }).message).toBe("Bad Gateway")
    expect(ErrorClassification.fromHttpStatus(502, {}).message).toBe("HTTP 502")
  })

  it("classifies the same errors the same way inside a stream, for every provider", () => {
    for (const [provider, status, body, type, retryable, code] of rows) {
      if (typeof body === "string") continue
      const signals = ProviderError.signalsOfBody(body)!
      const inner: Record<string, unknown> = Array.isArray(body)
        ? body[0].error
        : (body as { readonly error: Record<string, unknown> }).error
      const classified = provider === "anthropic"
        ? Anthropic.classifyError({ type: signals.type!, message: signals.message! })
        : provider === "gemini"
        ? Gemini.classifyError({ code: status, message: signals.message, status: signals.code })
        : OpenAiChat.classifyError({
          message: signals.message ?? null,
          type: signals.type ?? null,
          code: typeof inner.code === "string" ? inner.code : null
        })
      // an OpenAI in-stream error has no HTTP status: a null code is classified from its type alone
      if (provider === "openai" && inner.code === null && status === 503) {
        expect([classified.type, classified.retryable]).toStrictEqual(["api_error", true])
        continue
      }
      expect([provider, classified.type, classified.retryable, classified.code]).toStrictEqual([
        provider,
        type,
        retryable,
        code
      ])
    }
    expect(
      OpenAiResponses.classifyError("context_length_exceeded", "Your input exceeds the context window of this model.")
    ).toMatchObject({
      type: "api_error",
      retryable: false,
      code: ProviderError.contextLengthExceeded
    })
    expect(OpenAiResponses.classifyError("insufficient_quota", "quota")).toMatchObject({
      type: "rate_limit",
      retryable: false
    })
  })

  it("reads a bare provider error object (what older AI SDK providers put in an error part)", () => {
    expect(
      ProviderError.classify({ ...ProviderError.signalsOfBody({ type: "overloaded_error", message: "Overloaded" }) })
    ).toMatchObject({
      type: "provider_overloaded",
      retryable: true,
      code: "overloaded_error"
    })
    expect(ProviderError.signalsOfBody({ unrelated: true })).toBeUndefined()
    expect(ProviderError.signalsOfBody("text")).toBeUndefined()
  })

  it("a context-window message on a 5xx or 429 is not read as a context-length error", () => {
    expect(ProviderError.classify({ status: 500, message: "prompt is too long" }).code).toBe("500")
    expect(ProviderError.classify({ status: 429, message: "too many tokens per minute" }).type).toBe("rate_limit")
  })
})
