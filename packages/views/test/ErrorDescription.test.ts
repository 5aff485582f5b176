import { describe, expect, it } from "@effect/vitest"
import { ProviderError, StreamEvent } from "@sluice/core"
import { ErrorClassification, Gemini, type ProviderName } from "@sluice/providers"
import { readFileSync } from "node:fs"
import { ErrorDescription } from "../src/index.js"

interface Recorded {
  readonly status: number
  readonly headers?: Record<string, string>
  readonly body: unknown
}

/** Documented error bodies; their sources are named in the fixture. */
const bodies = JSON.parse(
  readFileSync(new URL("./fixtures/error-descriptions/bodies.json", import.meta.url), "utf8")
) as Record<"anthropic" | "openai" | "gemini", Record<string, Recorded>>

const fromBody = (family: "anthropic" | "openai" | "gemini", name: string): ProviderError.ProviderError => {
  const recorded = bodies[family][name]
  if (recorded === undefined) throw new Error(`no fixture ${family}.${name}`)
  return ErrorClassification.fromHttpStatus(recorded.status, {
    body: JSON.stringify(recorded.body),
    headers: recorded.headers,
    now: 0
  })
}

const describeBody = (provider: ProviderName.ProviderName, family: "anthropic" | "openai" | "gemini", name: string) =>
  ErrorDescription.createErrorDescription(fromBody(family, name), provider)

describe("ErrorDescription.createErrorDescription", () => {
  describe("Anthropic", () => {
    it("overloaded: Anthropic's load, not the caller's limits, retry", () => {
      const described = describeBody("anthropic", "anthropic", "overloaded")
      expect(described.title).toBe("Anthropic is overloaded")
      expect(described.retryable).toBe(true)
      expect(described.explanation).toContain("529")
      expect(described.explanation).toContain("not your rate limits")
      expect(described.retry).toBe("This is usually temporary: try again in a moment.")
      expect(described.hint).toContain("another Claude model")
      expect(described.detail).toBe("Anthropic said: Overloaded (overloaded_error, HTTP 529)")
      expect(described.text.startsWith("Anthropic is overloaded. ")).toBe(true)
    })

    it("overloaded inside a 200 stream (an error event's ErrorObject) reads the same", () => {
      const inStream = ProviderError.classify({
        type: "overloaded_error",
        code: "overloaded_error",
        message: "Overloaded"
      })
      const described = ErrorDescription.createErrorDescription(
        StreamEvent.errorObjectFromProviderError(inStream),
        "anthropic"
      )
      expect(described.title).toBe("Anthropic is overloaded")
      expect(described.retryable).toBe(true)
    })

    it("rate limit: per-organization limits, waits the Retry-After", () => {
      const described = describeBody("anthropic", "anthropic", "rate_limit")
      expect(described.title).toBe("Anthropic's rate limit was reached")
      expect(described.retry).toBe("Try again in 20 seconds.")
      expect(described.hint).toContain("anthropic-ratelimit-*")
    })

    it("authentication: names the key's variable, no retry", () => {
      const described = describeBody("anthropic", "anthropic", "authentication")
      expect(described.title).toBe("Anthropic rejected the API key")
      expect(described.retryable).toBe(false)
      expect(described.retry).toBe("Trying the same request again will not help.")
      expect(described.hint).toContain("ANTHROPIC_API_KEY")
    })

    it("credit balance: billing, no retry", () => {
      const described = describeBody("anthropic", "anthropic", "credit")
      expect(described.title).toBe("The Anthropic account needs billing")
      expect(described.hint).toContain("Plans & Billing")
      expect(described.retryable).toBe(false)
    })

    it("prompt too long: shorten the conversation", () => {
      const described = describeBody("anthropic", "anthropic", "context")
      expect(described.title).toBe("The conversation is too long for the model")
      expect(described.retryable).toBe(false)
    })

    it("unknown model and server error", () => {
      expect(describeBody("anthropic", "anthropic", "not_found").title).toBe("Anthropic does not know the model")
      const server = describeBody("anthropic", "anthropic", "server")
      expect(server.title).toBe("Anthropic had an internal error")
      expect(server.retryable).toBe(true)
    })

    it("refusal: Claude declined, no retry", () => {
      const refusal = ErrorClassification.contentBlocked(
        "refusal",
        "Anthropic refused to continue (stop_reason refusal)"
      )
      const described = ErrorDescription.createErrorDescription(refusal, "anthropic")
      expect(described.title).toBe("Claude declined to answer")
      expect(described.retryable).toBe(false)
      expect(described.retry).toBe("Trying the same request again will not help.")
    })
  })

  describe("OpenAI", () => {
    it("insufficient_quota: billing on platform.openai.com, never a retry", () => {
      for (const provider of ["openai-chat", "openai-responses"] as const) {
        const described = describeBody(provider, "openai", "insufficient_quota")
        expect(described.title).toBe("The OpenAI account is out of quota")
        expect(described.retryable).toBe(false)
        expect(described.retry).toBe("Trying the same request again will not help.")
        expect(described.hint).toContain("billing")
      }
    })

    it("rate limit: waits what retry-after-ms asks", () => {
      const described = describeBody("openai-chat", "openai", "rate_limit")
      expect(described.title).toBe("OpenAI's rate limit was reached")
      expect(described.retry).toBe("Try again in 2 seconds.")
    })

    it("invalid API key names OPENAI_API_KEY", () => {
      const described = describeBody("openai-responses", "openai", "invalid_api_key")
      expect(described.title).toBe("OpenAI rejected the API key")
      expect(described.hint).toContain("OPENAI_API_KEY")
    })

    it("context window, content policy and overload", () => {
      expect(describeBody("openai-chat", "openai", "context").title).toBe("The conversation is too long for the model")
      const policy = describeBody("openai-chat", "openai", "content_policy")
      expect(policy.title).toBe("OpenAI's content filter blocked the response")
      expect(policy.retryable).toBe(false)
      const overloaded = describeBody("openai-chat", "openai", "overloaded")
      expect(overloaded.title).toBe("OpenAI is overloaded")
      expect(overloaded.retryable).toBe(true)
    })

    it("an OpenAI-compatible server is not called OpenAI", () => {
      const described = describeBody("openai-compatible", "openai", "rate_limit")
      expect(described.title).toBe("The model server is rate limiting")
      expect(described.text).not.toContain("OpenAI")
    })

    it("timeouts and cut-off streams of the live client", () => {
      const idle = ErrorClassification.make("timeout", "stream_idle_timeout", "openai-chat: no byte for 5m", {
        retryable: true
      })
      expect(ErrorDescription.createErrorDescription(idle, "openai-chat").title).toBe("OpenAI stopped sending")
      const cut = ErrorDescription.createErrorDescription(ErrorClassification.truncated("OpenAI"), "openai-chat")
      expect(cut.title).toBe("The answer from OpenAI was cut off")
      expect(cut.retryable).toBe(true)
    })
  })

  describe("Gemini", () => {
    it("a safety finish names the filter and safetySettings", () => {
      const { error } = Gemini.mapFinishReason("SAFETY", false)
      if (error === undefined) throw new Error("SAFETY gives an error")
      const described = ErrorDescription.createErrorDescription(error, "gemini")
      expect(described.title).toBe("Gemini blocked the response")
      expect(described.explanation).toContain("safety filters")
      expect(described.hint).toContain("safetySettings")
      expect(described.retryable).toBe(false)
    })

    it("a blocked prompt (promptFeedback.blockReason) and the other block reasons", () => {
      const prompt = ErrorClassification.contentBlocked(
        "PROHIBITED_CONTENT",
        "Gemini blocked the prompt (PROHIBITED_CONTENT)"
      )
      const described = ErrorDescription.createErrorDescription(prompt, "gemini")
      expect(described.title).toBe("Gemini blocked the prompt")
      expect(described.hint).toContain("cannot be turned off")
      const recitation = Gemini.mapFinishReason("RECITATION", false).error
      if (recitation === undefined) throw new Error("RECITATION gives an error")
      expect(ErrorDescription.createErrorDescription(recitation, "gemini").explanation).toContain("recitation")
    })

    it("RESOURCE_EXHAUSTED: per-minute or daily quota", () => {
      const minute = describeBody("gemini", "gemini", "resource_exhausted")
      expect(minute.title).toBe("Gemini's quota was exceeded")
      expect(minute.explanation).toContain("per-minute")
      const daily = describeBody("gemini", "gemini", "daily_quota")
      expect(daily.explanation).toContain("daily")
      expect(daily.hint).toContain("resets")
    })

    it("UNAVAILABLE, a bad key, an unsupported region, an unknown model", () => {
      const unavailable = describeBody("gemini", "gemini", "unavailable")
      expect(unavailable.title).toBe("Gemini is overloaded")
      expect(unavailable.retryable).toBe(true)
      const key = describeBody("gemini", "gemini", "api_key")
      expect(key.title).toBe("Gemini rejected the API key")
      expect(key.hint).toContain("GEMINI_API_KEY")
      expect(describeBody("gemini", "gemini", "location").hint).toContain("billing")
      expect(describeBody("gemini", "gemini", "not_found").title).toBe("Gemini does not know the model")
    })

    it("a malformed function call finish", () => {
      const failed = Gemini.mapFinishReason("MALFORMED_FUNCTION_CALL", true).error
      if (failed === undefined) throw new Error("MALFORMED_FUNCTION_CALL gives an error")
      const described = ErrorDescription.createErrorDescription(failed, "gemini")
      expect(described.title).toBe("Gemini stopped the answer")
      expect(described.retryable).toBe(true)
    })
  })

  it("never contradicts `retryable`, for every provider and type", () => {
    const providers: ReadonlyArray<ProviderName.ProviderName> = [
      "openai-chat",
      "openai-compatible",
      "openai-responses",
      "anthropic",
      "gemini"
    ]
    for (const provider of providers) {
      for (const type of ProviderError.ProviderErrorType.literals) {
        for (const retryable of [true, false]) {
          const described = ErrorDescription.createErrorDescription(
            ErrorClassification.make(type, "some_code", "message", { retryable }),
            provider
          )
          expect(described.retryable).toBe(retryable)
          expect(described.retry === "Trying the same request again will not help.").toBe(!retryable)
          expect(described.text).toContain(described.title)
        }
      }
    }
  })
})
