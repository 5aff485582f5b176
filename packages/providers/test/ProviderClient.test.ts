import { describe, expect, it } from "@effect/vitest"
import { Summary, Turn } from "@sluice/accumulator"
import { type StreamEvent, TimerWheel } from "@sluice/core"
import { sleeps, withSleeps } from "@sluice/testing/clock"
import { drive, fixture, pause, recorded, serve } from "@sluice/testing/providers"
import * as Clock from "effect/Clock"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { LlmRequest, ProviderClient } from "../src/index.js"
import type { ProviderName } from "../src/ProviderName.js"

const keys = (...values: [string, ...Array<string>]) =>
  values.map((value) => Redacted.make(value)) as unknown as ProviderClient.Settings["apiKeys"]

const client = (provider: ProviderName, baseUrl: string, apiKeys: ProviderClient.Settings["apiKeys"] = keys("key-a")) =>
  ProviderClient.make({ provider, apiKeys, baseUrl }).pipe(Effect.provide(FetchHttpClient.layer))

const request = LlmRequest.prompt("test-model", "Hello")

const summaryOf = (events: ReadonlyArray<StreamEvent.StreamEvent>) =>
  Summary.fromTurn(Result.getOrThrow(Turn.fromEvents(events)))

/** Streams the request to completion, moving the TestClock over every backoff. */
const collect = (live: ProviderClient.Client, body: LlmRequest.LlmRequest = request) =>
  Effect.gen(function*() {
    const { delays, exit } = yield* drive(Stream.runCollect(live.stream(body)))
    const events = yield* exit
    return { events, delays, summary: summaryOf(events) }
  })

const anthropicText = recorded("anthropic/tool-parallel.sse")
const overloadedBody = JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } })

describe("ProviderClient", () => {
  it.effect("streams a provider's answer into the events of one complete turn", () =>
    Effect.gen(function*() {
      const server = yield* serve([{ _tag: "sse", body: anthropicText }])
      const { events, summary } = yield* collect(yield* client("anthropic", server.url))
      expect(summary.status).toBe("complete")
      expect(summary.text).toBe("I'll add and multiply the numbers 2 and 3 for you.")
      expect(summary.toolCalls.map((call) => call.name)).toStrictEqual(["add", "multiply"])
      expect(events[0]?.payload).toMatchObject({ type: "response_start", provider_id: "anthropic" })
      expect(server.requests()).toHaveLength(1)
    }))

  it.effect("429 with Retry-After: waits exactly as asked, rotates the key, keeps only the retried answer", () =>
    Effect.gen(function*() {
      const server = yield* serve([
        {
          _tag: "status",
          status: 429,
          headers: { "retry-after": "3" },
          body: JSON.stringify({
            error: { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded" }
          })
        },
        { _tag: "sse", body: recorded("openai-chat/text-simple.sse") }
      ])
      const live = yield* client("openai-chat", server.url, keys("key-a", "key-b"))
      const { delays, events, summary } = yield* collect(live)
      expect(delays).toStrictEqual([3000])
      expect(server.requests().map((r) => r.headers.authorization)).toStrictEqual(["Bearer key-a", "Bearer key-b"])
      expect(summary.status).toBe("complete")
      expect(summary.errors).toStrictEqual([])
      expect(events.filter((event) => event.type === "response_start")).toHaveLength(1)
    }))

  it.effect("429 insufficient_quota is read from the body: not retried, no key rotated, the turn ends with the quota error", () =>
    Effect.gen(function*() {
      const quota = {
        error: {
          message: "You exceeded your current quota.",
          type: "insufficient_quota",
          param: null,
          code: "insufficient_quota"
        }
      }
      const server = yield* serve([
        { _tag: "status", status: 429, body: JSON.stringify(quota) },
        { _tag: "sse", body: recorded("openai-chat/text-simple.sse") }
      ])
      const { delays, summary } = yield* collect(yield* client("openai-chat", server.url, keys("key-a", "key-b")))
      expect(delays).toStrictEqual([])
      expect(server.requests()).toHaveLength(1)
      expect(summary.status).toBe("error")
      expect(summary.errors).toStrictEqual([
        {
          type: "rate_limit",
          code: "insufficient_quota",
          message: "You exceeded your current quota.",
          retryable: false
        }
      ])
    }))

  it.effect("400 content_policy_violation is content_blocked and not retried", () =>
    Effect.gen(function*() {
      const policy = {
        error: {
          message: "Rejected by the safety system.",
          type: "invalid_request_error",
          param: null,
          code: "content_policy_violation"
        }
      }
      const server = yield* serve([{ _tag: "status", status: 400, body: JSON.stringify(policy) }])
      const { summary } = yield* collect(yield* client("openai-chat", server.url))
      expect(server.requests()).toHaveLength(1)
      expect(summary.errors).toStrictEqual([
        {
          type: "content_blocked",
          code: "content_policy_violation",
          message: "Rejected by the safety system.",
          retryable: false
        }
      ])
    }))

  it.effect("retry-after-ms is read before Retry-After", () =>
    Effect.gen(function*() {
      const server = yield* serve([
        { _tag: "status", status: 429, headers: { "retry-after-ms": "250", "retry-after": "9" }, body: "{}" },
        { _tag: "sse", body: anthropicText }
      ])
      const { delays, summary } = yield* collect(yield* client("anthropic", server.url))
      expect(delays).toStrictEqual([250])
      expect(summary.status).toBe("complete")
    }))

  it.effect("500 and 529 are retried with capped exponential backoff, rotating through the keys in order", () =>
    Effect.gen(function*() {
      const server = yield* serve([
        {
          _tag: "status",
          status: 500,
          body: JSON.stringify({ type: "error", error: { type: "api_error", message: "Internal" } })
        },
        { _tag: "status", status: 529, body: overloadedBody },
        { _tag: "status", status: 529, body: overloadedBody },
        { _tag: "sse", body: anthropicText }
      ])
      const live = yield* client("anthropic", server.url, keys("a", "b", "c"))
      const { delays, summary } = yield* collect(live)
      expect(delays).toStrictEqual([500, 1000, 2000])
      expect(server.requests().map((r) => r.headers["x-api-key"])).toStrictEqual(["a", "b", "c", "a"])
      expect(summary.status).toBe("complete")
    }))

  it.effect("the backoff is capped at maxDelay", () =>
    Effect.gen(function*() {
      const server = yield* serve([
        { _tag: "status", status: 503, body: "" },
        { _tag: "status", status: 503, body: "" },
        { _tag: "status", status: 503, body: "" },
        { _tag: "sse", body: anthropicText }
      ])
      const live = yield* ProviderClient.make({
        provider: "anthropic",
        apiKeys: keys("a"),
        baseUrl: server.url,
        retry: { initialDelay: "400 millis", maxDelay: "1 second" }
      }).pipe(Effect.provide(FetchHttpClient.layer))
      const { delays } = yield* collect(live)
      expect(delays).toStrictEqual([400, 800, 1000])
    }))

  it.effect("when the retries run out, the last failure is a response_error and the turn ends with status error", () =>
    Effect.gen(function*() {
      const server = yield* serve([
        { _tag: "status", status: 529, body: overloadedBody },
        { _tag: "status", status: 529, body: overloadedBody }
      ])
      const live = yield* ProviderClient.make({
        provider: "anthropic",
        apiKeys: keys("a"),
        baseUrl: server.url,
        retry: { maxRetries: 1 }
      }).pipe(
        Effect.provide(FetchHttpClient.layer)
      )
      const { delays, events, summary } = yield* collect(live)
      expect(delays).toStrictEqual([500])
      expect(server.requests()).toHaveLength(2)
      expect(summary.status).toBe("error")
      expect(summary.errors).toStrictEqual([{
        type: "provider_overloaded",
        code: "overloaded_error",
        message: "Overloaded",
        retryable: true
      }])
      expect(events.map((event) => event.type)).toStrictEqual(["response_start", "response_error", "response_done"])
    }))

  it.effect("a failure that is not retryable is reported at once, with the provider's code and message", () =>
    Effect.gen(function*() {
      const server = yield* serve([
        {
          _tag: "status",
          status: 400,
          body: JSON.stringify([{ error: { code: 400, message: "API key not valid.", status: "INVALID_ARGUMENT" } }])
        }
      ])
      const { delays, summary } = yield* collect(yield* client("gemini", server.url, keys("a", "b")))
      expect(delays).toStrictEqual([])
      expect(server.requests()).toHaveLength(1)
      expect(summary.status).toBe("error")
      expect(summary.errors).toStrictEqual([
        { type: "api_error", code: "INVALID_ARGUMENT", message: "API key not valid.", retryable: false }
      ])
    }))

  it.effect("an error body that is not JSON keeps its text as the message", () =>
    Effect.gen(function*() {
      const server = yield* serve([{ _tag: "status", status: 404, body: "<html>Not Found</html>" }])
      const { summary } = yield* collect(yield* client("openai-responses", server.url))
      expect(summary.errors).toStrictEqual([{
        type: "api_error",
        code: "404",
        message: "<html>Not Found</html>",
        retryable: false
      }])
    }))

  it.effect("a Retry-After longer than maxRetryAfter is not waited for", () =>
    Effect.gen(function*() {
      const server = yield* serve([{ _tag: "status", status: 429, headers: { "retry-after": "3600" }, body: "{}" }])
      const { delays, summary } = yield* collect(yield* client("openai-chat", server.url))
      expect(delays).toStrictEqual([])
      expect(summary.errors[0]).toMatchObject({ type: "rate_limit", retryable: true })
      expect(server.requests()).toHaveLength(1)
    }))

  it.effect("a connection dropped before the first byte is retried with the next key", () =>
    Effect.gen(function*() {
      const server = yield* serve([{ _tag: "drop" }, { _tag: "sse", body: recorded("gemini/tool-parallel.sse") }])
      const { delays, summary } = yield* collect(yield* client("gemini", server.url, keys("a", "b")))
      expect(delays).toStrictEqual([500])
      expect(server.requests().map((r) => r.headers["x-goog-api-key"])).toStrictEqual(["a", "b"])
      expect(summary.status).toBe("complete")
    }))

  it.effect("a stream cut off before its first item is retried", () =>
    Effect.gen(function*() {
      const server = yield* serve([{ _tag: "cut", body: anthropicText, events: 1 }, {
        _tag: "sse",
        body: anthropicText
      }])
      const { delays, events, summary } = yield* collect(yield* client("anthropic", server.url))
      expect(delays).toStrictEqual([500])
      expect(summary.status).toBe("complete")
      expect(events.filter((event) => event.type === "response_start")).toHaveLength(1)
    }))

  it.effect("an in-stream retryable error before any output (Anthropic overloaded_error in a 200) is retried", () =>
    Effect.gen(function*() {
      const overloaded = fixture("anthropic/overloaded.sse").split("\n\n").filter((event) =>
        !event.includes("content_block")
      ).join("\n\n")
      const server = yield* serve([{ _tag: "sse", body: overloaded }, { _tag: "sse", body: anthropicText }])
      const { delays, summary } = yield* collect(yield* client("anthropic", server.url, keys("a", "b")))
      expect(delays).toStrictEqual([500])
      expect(server.requests().map((r) => r.headers["x-api-key"])).toStrictEqual(["a", "b"])
      expect(summary.status).toBe("complete")
    }))

  it.effect("an in-stream error after output has started is an error event: the turn keeps its text and is not retried", () =>
    Effect.gen(function*() {
      const server = yield* serve([{ _tag: "sse", body: fixture("gemini/error-overloaded.sse") }, {
        _tag: "sse",
        body: anthropicText
      }])
      const { delays, summary } = yield* collect(yield* client("gemini", server.url))
      expect(delays).toStrictEqual([])
      expect(server.requests()).toHaveLength(1)
      expect(summary.status).toBe("error")
      expect(summary.text).toBe("Partial answer")
      expect(summary.errors).toMatchObject([{ type: "provider_overloaded", retryable: true }])
    }))

  it.effect("a connection dropped after the first output ends the turn with status error, keeping what arrived, without a retry", () =>
    Effect.gen(function*() {
      const body = recorded("openai-chat/text-simple.sse")
      const server = yield* serve([{ _tag: "cut", body, events: 3 }, { _tag: "sse", body }])
      const { delays, summary } = yield* collect(yield* client("openai-chat", server.url))
      expect(delays).toStrictEqual([])
      expect(server.requests()).toHaveLength(1)
      expect(summary.status).toBe("error")
      expect(summary.text.length).toBeGreaterThan(0)
      expect(summary.errors).toStrictEqual([
        {
          type: "api_error",
          code: "stream_truncated",
          message: "openai-chat stream ended without its terminal event",
          retryable: true
        }
      ])
    }))

  it.effect("interrupting the stream aborts the HTTP request: the server sees the connection close", () =>
    Effect.gen(function*() {
      const server = yield* serve([{ _tag: "hang", body: anthropicText, events: 4 }])
      const live = yield* client("anthropic", server.url)
      const seen: Array<StreamEvent.StreamEvent> = []
      const fiber = yield* Effect.forkChild(
        Stream.runForEach(live.stream(request), (event) => Effect.sync(() => seen.push(event)))
      )
      yield* server.hungWritten
      yield* Fiber.interrupt(fiber)
      const exit = yield* Fiber.await(fiber)
      yield* server.hungClosed
      expect(Exit.hasInterrupts(exit)).toBe(true)
      expect(server.requests()).toHaveLength(1)
    }))

  describe("a provider that goes quiet", () => {
    /** An OpenAI Chat client whose bodies may be quiet for 60 seconds. */
    const quietAfter60s = (baseUrl: string) =>
      ProviderClient.make({ provider: "openai-chat", apiKeys: keys("a"), baseUrl, idleTimeout: "60 seconds" }).pipe(
        Effect.provide(FetchHttpClient.layer)
      )

    /** Real I/O goes on until `ready` holds; the test's clock then jumps past the idle timeout. */
    const whenQuiet = (ready: () => boolean | Effect.Effect<boolean>) =>
      Effect.gen(function*() {
        for (let polls = 0;; polls++) {
          const now = ready()
          if (typeof now === "boolean" ? now : yield* now) break
          if (polls > 10_000) return yield* Effect.die(new Error("the client never went quiet"))
          yield* Effect.promise(pause)
        }
        yield* TestClock.adjust("60 seconds")
      })

    it.effect("no response headers within the idle timeout: the request is aborted and retried with the next key", () =>
      Effect.gen(function*() {
        const server = yield* serve([{ _tag: "silent" }, { _tag: "sse", body: anthropicText }])
        const live = yield* ProviderClient.make({
          provider: "anthropic",
          apiKeys: keys("a", "b"),
          baseUrl: server.url,
          responseTimeout: "60 seconds"
        }).pipe(
          Effect.provide(FetchHttpClient.layer)
        )
        const fiber = yield* Effect.forkChild(drive(Stream.runCollect(live.stream(request))))
        yield* whenQuiet(() => server.requests().length === 1)
        yield* server.hungClosed
        const { delays, exit } = yield* Fiber.join(fiber)
        const summary = summaryOf(yield* exit)
        expect(delays).toStrictEqual([500])
        expect(server.requests().map((r) => r.headers["x-api-key"])).toStrictEqual(["a", "b"])
        expect([summary.status, summary.errors]).toStrictEqual(["complete", []])
      }))

    it.effect("a body that stalls before any output is a retryable timeout error naming the wait (here with no retry left)", () =>
      withSleeps(Effect.gen(function*() {
        const server = yield* serve([{ _tag: "hang", body: anthropicText, events: 1 }])
        const live = yield* ProviderClient.make({
          provider: "anthropic",
          apiKeys: keys("a"),
          baseUrl: server.url,
          responseTimeout: "10 minutes",
          idleTimeout: "60 seconds",
          retry: { maxRetries: 0 }
        }).pipe(Effect.provide(FetchHttpClient.layer))
        const fiber = yield* Effect.forkChild(Stream.runCollect(live.stream(request)))
        yield* server.hungWritten
        // a sleep due in 60 s is the body's idle timeout, armed once the headers arrived
        // (the wait for them has its own, 10 minutes)
        yield* whenQuiet(() =>
          Effect.gen(function*() {
            const now = yield* Clock.currentTimeMillis
            return (yield* sleeps).some((at) => at === now + 60_000)
          })
        )
        const summary = summaryOf(yield* Fiber.join(fiber))
        yield* server.hungClosed
        expect(summary.status).toBe("error")
        expect(summary.errors).toStrictEqual([
          {
            type: "timeout",
            code: "stream_idle_timeout",
            message: "anthropic: no byte of the response body for 1m",
            retryable: true
          }
        ])
      })))

    it.effect("a body that stalls after output ends the turn with a timeout error, keeping what arrived, without a retry", () =>
      Effect.gen(function*() {
        const body = recorded("openai-chat/text-simple.sse")
        const server = yield* serve([{ _tag: "hang", body, events: 3 }, { _tag: "sse", body }])
        const live = yield* quietAfter60s(server.url)
        const seen: Array<StreamEvent.StreamEvent> = []
        const fiber = yield* Effect.forkChild(
          Stream.runForEach(live.stream(request), (event) => Effect.sync(() => seen.push(event)))
        )
        yield* server.hungWritten
        yield* whenQuiet(() => seen.some((event) => event.type === "item_delta"))
        yield* Fiber.join(fiber)
        const summary = summaryOf(seen)
        expect(server.requests()).toHaveLength(1)
        expect(summary.status).toBe("error")
        expect(summary.text.length).toBeGreaterThan(0)
        expect(summary.errors).toStrictEqual([
          {
            type: "timeout",
            code: "stream_idle_timeout",
            message: "openai-chat: no byte of the response body for 1m",
            retryable: true
          }
        ])
      }))

    it.effect("on a TimerWheel in context, the idle timeout is a timer there and ends the turn alike", () =>
      Effect.gen(function*() {
        const body = recorded("openai-chat/text-simple.sse")
        const server = yield* serve([{ _tag: "hang", body, events: 3 }])
        const wheel = yield* TimerWheel.make
        const live = yield* quietAfter60s(server.url)
        const seen: Array<StreamEvent.StreamEvent> = []
        const fiber = yield* Effect.forkChild(
          Stream.runForEach(live.stream(request), (event) => Effect.sync(() => seen.push(event))).pipe(
            Effect.provideService(TimerWheel.TimerWheel, wheel)
          )
        )
        yield* server.hungWritten
        yield* whenQuiet(() =>
          Effect.map(wheel.size, (timers) => timers === 1 && seen.some((event) => event.type === "item_delta"))
        )
        yield* Fiber.join(fiber)
        const summary = summaryOf(seen)
        expect(summary.status).toBe("error")
        expect(summary.text.length).toBeGreaterThan(0)
        expect(summary.errors.map((error) => error.code)).toStrictEqual(["stream_idle_timeout"])
        // the timer went with the body
        expect(yield* wheel.size).toBe(0)
      }).pipe(Effect.scoped))

    it.effect("a consumer slower than idleTimeout is not a quiet provider: only a waiting read counts", () =>
      Effect.gen(function*() {
        const server = yield* serve([{ _tag: "sse", body: recorded("openai-chat/text-simple.sse") }])
        const live = yield* quietAfter60s(server.url)
        const seen: Array<StreamEvent.StreamEvent> = []
        // two minutes pass on the Clock while each event is handled, and none while a read waits
        yield* Stream.runForEach(live.stream(request), (event) =>
          Effect.andThen(
            TestClock.adjust("2 minutes"),
            Effect.sync(() => seen.push(event))
          ))
        const summary = summaryOf(seen)
        expect(summary.status).toBe("complete")
        expect(summary.errors).toStrictEqual([])
        expect(summary.text.length).toBeGreaterThan(0)
      }))
  })

  it.effect("a body that is not the provider's wire format fails the stream with WireDecodeError", () =>
    Effect.gen(function*() {
      const server = yield* serve([{ _tag: "sse", body: "data: {\"nope\": 1}\n\n" }])
      const live = yield* client("anthropic", server.url)
      const exit = yield* Effect.exit(Stream.runDrain(live.stream(request)))
      expect(exit).toMatchObject({
        _tag: "Failure",
        cause: { reasons: [{ _tag: "Fail", error: { _tag: "WireDecodeError" } }] }
      })
    }))
})

describe("ProviderClient.config", () => {
  const read = (provider: ProviderName, env: Record<string, string>, baseUrl?: string) =>
    ProviderClient.config(provider, { baseUrl }).pipe(
      Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))
    )

  it.effect("reads a comma-separated key list, trimmed, in order", () =>
    Effect.gen(function*() {
      const settings = yield* read("anthropic", { ANTHROPIC_API_KEY: " k1, k2 ,,k3 " })
      expect(settings.apiKeys.map(Redacted.value)).toStrictEqual(["k1", "k2", "k3"])
      expect(settings.baseUrl).toBeUndefined()
    }))

  it.effect("the base URL comes from the option, else the provider's variable", () =>
    Effect.gen(function*() {
      const env = { OPENAI_API_KEY: "k", OPENAI_BASE_URL: "http://proxy/v1" }
      expect((yield* read("openai-compatible", env)).baseUrl).toBe("http://proxy/v1")
      expect((yield* read("openai-responses", env, "http://other/v1")).baseUrl).toBe("http://other/v1")
      expect((yield* read("gemini", { GEMINI_API_KEY: "g", GEMINI_BASE_URL: "http://g/v1beta" })).baseUrl).toBe(
        "http://g/v1beta"
      )
    }))

  it.effect("a missing or empty key variable fails naming it", () =>
    Effect.gen(function*() {
      const missing = yield* Effect.flip(read("gemini", {}))
      expect(String(missing)).toContain("GEMINI_API_KEY")
      const empty = yield* Effect.flip(read("openai-chat", { OPENAI_API_KEY: " , " }))
      expect(String(empty)).toContain("OPENAI_API_KEY holds no API key")
    }))
})
