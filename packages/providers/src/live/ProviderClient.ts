/**
 * The live client: sends an `LlmRequest` to a provider as its streaming request, on
 * `effect/http`'s `HttpClient` (provide `NodeHttpClient.layerNodeHttp` of
 * `@effect/platform-node`, or `FetchHttpClient.layer`), and turns the response body
 * into StreamEvents through the provider's `decodeSse` (SSE framing and its normalizer
 * in one step).
 *
 * Failures follow the `retryable` flag of docs/errors.md (see `LiveRetry`). Before any output of
 * the turn has been emitted, a retryable failure (an HTTP 429, 408, 5xx or 529, a
 * connection that fails or drops before the first item, an in-stream retryable error
 * such as Anthropic's `overloaded_error`) is retried after a backoff on Effect's
 * Clock, honoring `retry-after-ms` / `Retry-After`, and every such failure rotates to
 * the next API key of the configured list. Once output has started, a failure
 * becomes a `response_error` event and the turn ends with status `error`, keeping
 * what arrived. A failure that is not retried is reported the same way: the stream
 * always ends with `response_done`, and fails only when the provider's bytes are not
 * its wire format (`WireDecodeError`, `SseError`). Interrupting the stream aborts the
 * HTTP request.
 *
 * A request is checked before it is sent (`LlmRequest.checkResult`: temperature from
 * 0 to 2, a positive `maxTokens`, ...): a request that breaks a rule fails the stream
 * with a `LlmRequestError` naming the field, and nothing is sent. A request with
 * `streaming: false` is sent as the provider's non-streaming request: its one JSON
 * answer is decoded by the provider's `normalizeResponse` into the same events a
 * stream of the same content gives, under the same retry rules.
 *
 * A provider that goes quiet cannot stall a turn: when no response arrives within
 * `responseTimeout`, or no byte of the body within `idleTimeout` (both 5 minutes by
 * default, on Effect's Clock), the request is aborted and the attempt fails with a
 * retryable `timeout` error (`response_timeout` or `stream_idle_timeout`), retried or
 * reported as above. The idle time counts only while a read of the body waits (a
 * slow consumer is not a quiet provider), and a quiet body is ended by aborting its
 * request through the request's scope (`HttpClient.withScope`), so the `HttpClient`
 * in context must honour its abort signal, as Effect's fetch and Node clients do.
 *
 * @since 0.1.0
 */
import type { ProviderError } from "@sluice/core"
import { Ids, Sse, StreamEvent, TimerWheel, TurnBuilder, Usage } from "@sluice/core"
import * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Channel from "effect/Channel"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Pull from "effect/Pull"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as ErrorClassification from "../ErrorClassification.js"
import type { NormalizeOptions } from "../Normalizer.js"
import type { ProviderName } from "../ProviderName.js"
import { checkResult, type LlmRequest, type LlmRequestError } from "../request/LlmRequest.js"
import * as Providers from "../request/Providers.js"
import { WireDecodeError } from "../WireDecodeError.js"
import * as LiveRetry from "./LiveRetry.js"

/**
 * How to reach one provider.
 *
 * @since 0.1.0
 * @category models
 */
export interface Settings {
  readonly provider: ProviderName
  /** Tried in order; the next one after every retryable failure. */
  readonly apiKeys: readonly [Redacted.Redacted<string>, ...Array<Redacted.Redacted<string>>]
  /** The prefix the provider's SDK accepts as base URL; `Providers.defaultBaseUrl` when absent. */
  readonly baseUrl?: string | undefined
  readonly retry?: LiveRetry.Options | undefined
  /**
   * How long to wait for the response (its status and headers) before the attempt is
   * aborted as a retryable timeout; `defaultTimeout` when absent.
   */
  readonly responseTimeout?: Duration.Input | undefined
  /**
   * How long the response body may keep silent (no byte at all) before the attempt is
   * aborted as a retryable timeout; `defaultTimeout` when absent. Pick it above the
   * longest quiet stretch the model may have: a reasoning model can think for
   * minutes before its first token, while Anthropic sends a `ping` every few seconds.
   */
  readonly idleTimeout?: Duration.Input | undefined
}

/**
 * The response and idle timeouts when `Settings` gives none.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultTimeout: Duration.Duration = Duration.minutes(5)

/**
 * What the stream fails with: the provider's bytes are not its wire format
 * (`WireDecodeError`, `SseError`), or the request broke a rule of `LlmRequest`
 * (`LlmRequestError`, before anything was sent).
 *
 * @since 0.1.0
 * @category errors
 */
export type StreamError = WireDecodeError | Sse.SseError | LlmRequestError

/**
 * A client of one provider.
 *
 * @since 0.1.0
 * @category models
 */
export interface Client {
  readonly provider: ProviderName
  readonly baseUrl: string
  /**
   * The events of one streamed turn. `options` name the turn (as for `normalize`);
   * the model id defaults to the request's model.
   */
  readonly stream: (
    request: LlmRequest,
    options?: NormalizeOptions
  ) => Stream.Stream<StreamEvent.StreamEvent, StreamError>
}

/**
 * The client as a service.
 *
 * @since 0.1.0
 * @category services
 */
export class ProviderClient extends Context.Service<ProviderClient, Client>()("@sluice/providers/ProviderClient") {}

const isOutput = (event: StreamEvent.StreamEvent): boolean => {
  switch (event.type) {
    case "item_start":
    case "item_delta":
    case "item_done":
    case "item_error":
    case "item_cancelled":
      return true
    default:
      return false
  }
}

/** The retryable error that ended a turn without output, if it ended that way. */
const failureOf = (events: ReadonlyArray<StreamEvent.StreamEvent>): StreamEvent.ErrorObject | undefined => {
  for (const event of events) if (event.payload.type === "response_error") return event.payload.error
  return undefined
}

/** How one attempt went. */
type Attempt =
  | {
    readonly _tag: "Started"
    /** The turn's events, from the first (those read before the first output, then the rest). */
    readonly events: Stream.Stream<StreamEvent.StreamEvent, StreamError>
  }
  | { readonly _tag: "Ended"; readonly events: ReadonlyArray<StreamEvent.StreamEvent> }

/** The truncation a stalled body caused, reported as the stall it was. */
const stalledInstead = (event: StreamEvent.StreamEvent, stall: ProviderError.ProviderError): StreamEvent.StreamEvent =>
  event.payload.type === "response_error" && event.payload.error.code === "stream_truncated"
    ? { ...event, payload: { ...event.payload, error: StreamEvent.errorObjectFromProviderError(stall) } }
    : event

const headersOf = (response: HttpClientResponse.HttpClientResponse): Record<string, string> => ({ ...response.headers })

/**
 * A client of the provider in `settings`, on the `HttpClient` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (settings: Settings): Effect.Effect<Client, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const http = (yield* HttpClient.HttpClient).pipe(HttpClient.withScope)
    const provider = settings.provider
    const baseUrl = settings.baseUrl ?? Providers.defaultBaseUrl(provider)
    const { decodeSse, normalizeResponse } = Providers.get(provider)
    const keys = settings.apiKeys
    const keyIndex = yield* Ref.make(0)
    const retry = settings.retry ?? {}
    const responseTimeout = Duration.fromInputUnsafe(settings.responseTimeout ?? defaultTimeout)
    const idleTimeout = Duration.fromInputUnsafe(settings.idleTimeout ?? defaultTimeout)
    const quiet = (code: "response_timeout" | "stream_idle_timeout", what: string, after: Duration.Duration) =>
      ErrorClassification.make("timeout", code, `${provider}: ${what} for ${Duration.format(after)}`, {
        retryable: true
      })

    /** A turn that ended before the provider answered: start, the error, the end. */
    const failed = (error: ProviderError.ProviderError, options: NormalizeOptions) =>
      Effect.map(Clock.currentTimeMillis, (now): Attempt => {
        const builder = new TurnBuilder.TurnBuilder({ providerId: provider, options, now: () => now })
        const out: Array<StreamEvent.StreamEvent> = []
        builder.start(out)
        builder.error(out, error)
        builder.finish(out, { finishReason: "error", usage: Usage.empty })
        return { _tag: "Ended", events: out }
      })

    const rejected = (response: HttpClientResponse.HttpClientResponse, options: NormalizeOptions) =>
      Effect.gen(function*() {
        const text = yield* Effect.orElseSucceed(response.text, () => "")
        const now = yield* Clock.currentTimeMillis
        const error = ErrorClassification.fromHttpStatus(response.status, {
          body: text,
          headers: headersOf(response),
          now,
          ...(text === "" ? {} : { raw: text })
        })
        return yield* failed(error, options)
      })

    const unreachable = (error: HttpClientError.HttpClientError, options: NormalizeOptions) =>
      failed(
        ErrorClassification.make("api_error", "connection_error", `${provider}: ${error.message}`, {
          retryable: true,
          raw: error
        }),
        options
      )

    /**
     * Reads events until the first output, or to the end of a turn without output.
     *
     * The body's idle timeout costs no fiber between the body and its reader, and none
     * of its own on a `TimerWheel`: each read notes when it began waiting, and one
     * timer looks when a waiting read would pass `idleTimeout`. When one has, it closes
     * the request's scope, which aborts the request (`HttpClient.withScope`): the read
     * fails, the body ends, and the turn ends with the timeout error, keeping what
     * arrived. Otherwise the timer is set again for the read waiting then (or a whole
     * `idleTimeout` on when none waits). Only a waiting read counts: bytes the consumer
     * has not asked for yet wait in the socket without the provider being quiet. The
     * timer is on the `TimerWheel` in context when there is one, else one sleeping fiber
     * in the attempt's scope.
     */
    const started = (
      response: HttpClientResponse.HttpClientResponse,
      options: NormalizeOptions,
      scope: Scope.Scope,
      request: Scope.Closeable
    ) =>
      Effect.gen(function*() {
        // set when the body went quiet: the truncation the normalizer then reports says so
        let stalled: ProviderError.ProviderError | undefined
        const clock = yield* Clock.Clock
        const idleMs = Duration.toMillis(idleTimeout)
        // when the read now waiting began; undefined while none waits
        let waitingSince: number | undefined
        if (Duration.isFinite(idleTimeout)) {
          // how long until a waiting read passes the timeout (a whole timeout while none waits)
          const left = (now: number) => (waitingSince ?? now) + idleMs - now
          const stall = Effect.suspend(() => {
            stalled = quiet("stream_idle_timeout", "no byte of the response body", idleTimeout)
            return Scope.close(request, Exit.void)
          })
          const wheel = yield* Effect.serviceOption(TimerWheel.TimerWheel)
          if (Option.isSome(wheel)) {
            // a timer on the process's wheel (a turn of `TurnPipeline` has one)
            let timer: TimerWheel.Timer | undefined
            const look: Effect.Effect<void> = Effect.suspend(() => {
              const now = clock.currentTimeMillisUnsafe()
              const wait = left(now)
              if (wait <= 0) return stall
              return Effect.map(wheel.value.schedule(now + wait, look), (next) => {
                timer = next
              })
            })
            yield* look
            yield* Scope.addFinalizer(scope, Effect.suspend(() => timer?.cancel ?? Effect.void))
          } else {
            // else one sleeping fiber in the attempt's scope
            const watch = Effect.gen(function*() {
              for (let wait = left(clock.currentTimeMillisUnsafe()); wait > 0;) {
                yield* Effect.sleep(wait)
                wait = left(clock.currentTimeMillisUnsafe())
              }
              yield* stall
            })
            yield* Effect.forkIn(watch, scope)
          }
        }
        const pull = yield* response.stream.pipe(
          // one step around each read: when it began to wait, for the idle timeout; and a
          // connection dropped (or stalled) mid-body ends the body, so that the normalizer
          // keeps what arrived and reports a retryable `stream_truncated`
          (body) =>
            Stream.transformPull(body, (read) =>
              Effect.succeed(Effect.suspend(() => {
                waitingSince = clock.currentTimeMillisUnsafe()
                return Pull.matchEffect(read, {
                  onSuccess: (bytes) => {
                    waitingSince = undefined
                    return Effect.succeed(bytes)
                  },
                  onFailure: (cause) => {
                    waitingSince = undefined
                    return Effect.andThen(
                      Effect.logWarning(
                        `${provider}: the response body failed: ${
                          stalled?.message ??
                            Option.match(Cause.findErrorOption(cause), {
                              onNone: () => Cause.pretty(cause),
                              onSome: (error) => error.message
                            })
                        }`
                      ),
                      Cause.done()
                    )
                  },
                  onDone: () => {
                    waitingSince = undefined
                    return Cause.done()
                  }
                })
              }))),
          decodeSse(options),
          // the body's own pull, in the attempt's scope: `Stream.toPull` would put a
          // context change and a semaphore around every read, for one reader that
          // needs neither
          (events) => Channel.toPullScoped(Stream.toChannel(events), scope),
          // a stalled body's truncation reported as the stall (a step on the pull, not
          // a stage: the body is read through as few as it takes)
          Effect.map((read) =>
            Effect.map(read, (events) => {
              const stall = stalled
              return stall === undefined ? events : Arr.map(events, (event) => stalledInstead(event, stall))
            })
          )
        )
        const head: Array<StreamEvent.StreamEvent> = []
        while (true) {
          const chunk = yield* Effect.result(pull)
          if (Result.isFailure(chunk)) {
            if (Cause.isDone(chunk.failure)) {
              return { _tag: "Ended", events: head } satisfies Attempt
            }
            return yield* Effect.fail(chunk.failure)
          }
          const events = chunk.success
          head.push(...events)
          if (events.some(isOutput)) {
            // the events read so far first, then the body's pull itself: one pull a read
            let first: Arr.NonEmptyReadonlyArray<StreamEvent.StreamEvent> | undefined = Arr.isArrayNonEmpty(head)
              ? head
              : undefined
            const next = Effect.suspend(() => {
              if (first === undefined) {
                return pull
              }
              const out = first
              first = undefined
              return Effect.succeed(out)
            })
            return { _tag: "Started", events: Stream.fromPull(Effect.succeed(next)) } satisfies Attempt
          }
        }
      })

    /** The one JSON body of a non-streaming answer, decoded into the turn's events. */
    const answered = (response: HttpClientResponse.HttpClientResponse, options: NormalizeOptions) =>
      Effect.gen(function*() {
        const text = yield* response.text.pipe(
          Effect.timeoutOrElse({
            duration: idleTimeout,
            orElse: () => Effect.fail(quiet("stream_idle_timeout", "no complete response body", idleTimeout))
          }),
          Effect.result
        )
        if (Result.isFailure(text)) {
          const failure = text.failure
          return yield* failed(
            failure._tag === "ProviderError"
              ? failure
              : ErrorClassification.make("api_error", "stream_truncated", `${provider}: ${failure.message}`, {
                retryable: true,
                raw: failure
              }),
            options
          )
        }
        let body: unknown
        try {
          body = JSON.parse(text.success)
        } catch (error) {
          return yield* new WireDecodeError({
            provider,
            line: 0,
            reason: "InvalidJson",
            message: `${provider} response body is not JSON (${String(error)}): ${text.success.slice(0, 200)}`
          })
        }
        const events = yield* normalizeResponse(body, options)
        return events.some(isOutput)
          ? ({ _tag: "Started", events: Stream.fromIterable(events) } satisfies Attempt)
          : ({ _tag: "Ended", events } satisfies Attempt)
      })

    const attempt = (request: LlmRequest, options: NormalizeOptions, scope: Scope.Scope) =>
      Effect.gen(function*() {
        const index = yield* Ref.get(keyIndex)
        const key = keys[index % keys.length]!
        const wire = Providers.encode(provider, request, { apiKey: Redacted.value(key), baseUrl })
        // the request in a scope of its own inside the attempt's: the body's idle watch
        // (in the attempt's scope) closes it
        const requestScope = yield* Scope.fork(scope, "sequential")
        const outcome = yield* HttpClientRequest.post(wire.url).pipe(
          HttpClientRequest.setHeaders(wire.headers),
          HttpClientRequest.bodyJsonUnsafe(wire.body),
          http.execute,
          Scope.provide(requestScope),
          Effect.timeoutOrElse({
            duration: responseTimeout,
            orElse: () => Effect.fail(quiet("response_timeout", "no response", responseTimeout))
          }),
          Effect.matchEffect({
            onFailure: (
              error
            ) => (error._tag === "ProviderError" ? failed(error, options) : unreachable(error, options)),
            onSuccess: (response) => (response.status >= 200 && response.status < 300
              ? (request.streaming === false
                ? answered(response, options)
                : started(response, options, scope, requestScope))
              : rejected(response, options))
          }),
          Scope.provide(scope)
        )
        return outcome
      })

    const stream = (
      unchecked: LlmRequest,
      given?: NormalizeOptions
    ): Stream.Stream<StreamEvent.StreamEvent, StreamError> =>
      Stream.unwrap(
        Effect.gen(function*() {
          // the rules every provider's request keeps (temperature 0-2, ...), and the defaults
          const request = yield* Effect.fromResult(checkResult(unchecked))
          const options: NormalizeOptions = {
            ...given,
            runId: given?.runId ?? Ids.generateEventId(),
            turnId: given?.turnId ?? Ids.generateEventId(),
            threadId: given?.threadId ?? Ids.generateEventId(),
            modelId: given?.modelId ?? request.model,
            // the request is known: a custom tool call under another name is the provider's own
            toolNames: given?.toolNames ?? (request.tools ?? []).map((tool) => tool.name)
          }
          const parent = yield* Effect.scope
          const next = yield* Schedule.toStepWithSleep(LiveRetry.schedule(retry))
          for (let tries = 1;; tries++) {
            const scope = yield* Scope.fork(parent, "sequential")
            const outcome = yield* Effect.onError(attempt(request, options, scope), (cause) =>
              Scope.close(scope, Exit.failCause(cause)))
            if (outcome._tag === "Started") {
              return outcome.events
            }
            yield* Scope.close(scope, Exit.void)
            const error = failureOf(outcome.events)
            if (error === undefined || error.retryable !== true) {
              return Stream.fromIterable(outcome.events)
            }
            yield* Ref.update(keyIndex, (index) =>
              (index + 1) % keys.length)
            const waited = yield* Effect.result(next(error))
            if (Result.isFailure(waited)) return Stream.fromIterable(outcome.events)
            yield* Effect.logWarning(
              `${provider}: attempt ${tries} failed (${error.type ?? "api_error"} ${error.code}: ${error.message}); ${
                keys.length > 1 ? "retrying with the next API key" : "retrying"
              }`
            )
          }
        })
      )

    return { provider, baseUrl, stream }
  })

/**
 * The service from `settings`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (settings: Settings): Layer.Layer<ProviderClient, never, HttpClient.HttpClient> =>
  Layer.effect(ProviderClient, make(settings))

/**
 * A comma-separated list of API keys: each trimmed, empty entries dropped; fails when
 * none is left.
 *
 * @since 0.1.0
 * @category config
 */
export const apiKeys = (name: string): Config.Config<Settings["apiKeys"]> =>
  Config.Redacted(name).pipe(
    Config.mapEffect((value) => {
      const [first, ...rest] = Redacted.value(value)
        .split(",")
        .map((key) => key.trim())
        .filter((key) => key !== "")
      return first === undefined
        ? Effect.fail(
          new Config.ConfigError(
            new Schema.SchemaError(
              new SchemaIssue.Pointer([name], new SchemaIssue.InvalidValue({ message: `${name} holds no API key` }))
            )
          )
        )
        : Effect.succeed<Settings["apiKeys"]>([Redacted.make(first), ...rest.map((key) => Redacted.make(key))])
    })
  )

/**
 * What `config` and `layerConfig` take from the caller rather than the environment.
 *
 * @since 0.1.0
 * @category config
 */
export type Overrides = Partial<Pick<Settings, "baseUrl" | "retry" | "responseTimeout" | "idleTimeout">>

/**
 * The settings of `provider` from the environment (or any `ConfigProvider`): the keys
 * from `Providers.apiKeyVariable(provider)` (`OPENAI_API_KEY`,
 * `ANTHROPIC_API_KEY`, `GEMINI_API_KEY`), the base URL from `baseUrl`, else
 * `Providers.baseUrlVariable(provider)` (`OPENAI_BASE_URL`, ...), else the
 * provider's default.
 *
 * @since 0.1.0
 * @category config
 */
export const config = (
  provider: ProviderName,
  overrides: Overrides = {}
): Config.Config<Settings> =>
  Config.all({
    apiKeys: apiKeys(Providers.apiKeyVariable(provider)),
    baseUrl: Config.option(Config.String(Providers.baseUrlVariable(provider)))
  }).pipe(
    Config.map(({ apiKeys, baseUrl }): Settings => ({
      provider,
      apiKeys,
      baseUrl: overrides.baseUrl ?? Option.getOrUndefined(baseUrl),
      retry: overrides.retry,
      responseTimeout: overrides.responseTimeout,
      idleTimeout: overrides.idleTimeout
    }))
  )

/**
 * The service with its settings from `config`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  provider: ProviderName,
  overrides: Overrides = {}
): Layer.Layer<ProviderClient, Config.ConfigError, HttpClient.HttpClient> =>
  Layer.effect(ProviderClient, Effect.flatMap(config(provider, overrides), make))
