/**
 * The docs/upserts.md imperative API for callers outside Effect: one processor per turn, events
 * in through `processEvent`, Redis Stream B messages out through the `onEmit`
 * callback. A thin facade over the same stage core as `UpsertStream.upserts`: the
 * batching, the held items and the per-item fallback timers are the stage's own. Its
 * timers and retry delays run on the `Clock` of the Effect services it is given (a
 * `Context`, as `Effect.context()` gives it; Effect's defaults unless `runtime` is
 * set), so tests drive them with `TestClock`.
 *
 * @since 0.1.0
 */
import { SchemaDecode, StreamBMessage, StreamEvent } from "@sluice/core"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Result from "effect/Result"
import * as Scope from "effect/Scope"
import * as StageCore from "./internal/stageCore.js"
import * as ItemBuffer from "./ItemBuffer.js"
import * as RetryPolicy from "./RetryPolicy.js"
import * as StreamBMessages from "./StreamBMessages.js"
import { EmitFailed, InvalidUpsertOptions, type OptionIssue, ProcessorDestroyed } from "./UpsertErrors.js"
import * as UpsertOptions from "./UpsertOptions.js"

/**
 * The docs/upserts.md options. `turnId`, `threadId` and `onEmit` are required; the rest have
 * the defaults of `UpsertOptions` and `RetryPolicy`.
 *
 * @since 0.1.0
 * @category models
 */
export interface UpsertStreamProcessorOptions extends UpsertOptions.UpsertOptionsInput, RetryPolicy.RetryOptionsInput {
  readonly turnId: string
  readonly threadId: string
  /** Receives every message, in order; a rejection is retried per the retry options. */
  readonly onEmit: (message: StreamBMessage.StreamBMessage) => Promise<void>
  /**
   * The Effect services whose `Clock` and logger the processor uses (its
   * runtime): a `Context`, as `yield* Effect.context()` gives it.
   */
  readonly runtime?: Context.Context<never> | undefined
}

const describe = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

const required = (options: UpsertStreamProcessorOptions): Array<OptionIssue> => {
  const issues: Array<OptionIssue> = []
  if (typeof options.turnId !== "string") issues.push({ path: "turnId", message: "is missing" })
  if (typeof options.threadId !== "string") issues.push({ path: "threadId", message: "is missing" })
  if (typeof options.onEmit !== "function") issues.push({ path: "onEmit", message: "must be a function" })
  return issues
}

const validate = (
  options: UpsertStreamProcessorOptions
): Result.Result<readonly [UpsertOptions.ResolvedOptions, RetryPolicy.RetryPolicy], InvalidUpsertOptions> => {
  const stage = UpsertOptions.make(options)
  const retry = RetryPolicy.make(options)
  const issues = [
    ...required(options),
    ...(Result.isFailure(stage) ? stage.failure.issues : []),
    ...(Result.isFailure(retry) ? retry.failure.issues : [])
  ]
  if (Result.isSuccess(stage) && Result.isSuccess(retry) && issues.length === 0) {
    return Result.succeed([stage.success, retry.success])
  }
  const text = issues.map((issue) => (issue.path === "" ? issue.message : `${issue.path}: ${issue.message}`)).join("; ")
  return Result.fail(new InvalidUpsertOptions({ issues, message: `invalid options: ${text}` }))
}

const decodeEvent = SchemaDecode.decodeUnknown(StreamEvent.StreamEvent)
// the fast path: a valid event is used as it came; anything else is decoded, to be explained
const validEvent = StreamEvent.decodesToItself

/**
 * The processor. The constructor throws `InvalidUpsertOptions` when the options are
 * invalid. Every method that returns a promise rejects with the typed error itself
 * (`EmitFailed`, `UnexpectedEvent`, `SchemaError` for a malformed event,
 * `ProcessorDestroyed`).
 *
 * @example
 * ```ts
 * import type { StreamBMessage, StreamEvent } from "@sluice/core"
 * import { UpsertStreamProcessor } from "@sluice/upserts"
 *
 * declare const turnId: string, threadId: string
 * declare const events: AsyncIterable<StreamEvent.StreamEvent>
 * declare const write: (message: StreamBMessage.StreamBMessage) => Promise<void> // to Redis Stream B
 *
 * const processor = new UpsertStreamProcessor({ turnId, threadId, onEmit: write })
 * for await (const event of events) await processor.processEvent(event)
 * await processor.destroy()
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export class UpsertStreamProcessor {
  readonly #context: Context.Context<never>
  readonly #scope: Scope.Closeable
  readonly #core: StageCore.StageCore<EmitFailed>
  #destroyed = false

  constructor(options: UpsertStreamProcessorOptions) {
    const validated = validate(options)
    if (Result.isFailure(validated)) throw validated.failure
    const [stage, policy] = validated.success
    const onEmit = options.onEmit
    const retry = RetryPolicy.schedule(policy)
    const emit = (message: StreamBMessage.StreamBMessage) =>
      Effect.tryPromise({ try: () => onEmit(message), catch: (cause) => cause }).pipe(
        Effect.retry(retry),
        Effect.mapError((cause) =>
          new EmitFailed({
            attempts: policy.retryAttempts + 1,
            payloadType: message.payloadType,
            cause,
            message: `onEmit failed ${policy.retryAttempts + 1} times for a ${message.payloadType} message: ${
              describe(cause)
            }`
          })
        )
      )
    this.#context = options.runtime ?? Context.empty()
    this.#scope = Effect.runSyncWith(this.#context)(Scope.make())
    this.#core = Effect.runSyncWith(this.#context)(
      Scope.provide(
        StageCore.make(
          stage,
          (payloads) =>
            Effect.forEach(payloads, (payload) => Effect.flatMap(StreamBMessages.fromPayload(payload), emit), {
              discard: true
            })
        ),
        this.#scope
      )
    )
  }

  #runPromise<E>(effect: Effect.Effect<void, E>): Promise<void> {
    return Effect.runPromiseExitWith(this.#context)(effect).then((exit) =>
      Exit.isSuccess(exit) ? undefined : Promise.reject(Cause.squash(exit.cause))
    )
  }

  #run<E>(operation: string, effect: Effect.Effect<void, E>): Promise<void> {
    return this.#destroyed
      ? Promise.reject(new ProcessorDestroyed({ operation, message: `${operation} called after destroy()` }))
      : this.#runPromise(effect)
  }

  /**
   * Processes one event: buffers it, or emits what it completes. Resolves once every
   * message it caused was accepted by `onEmit`. If a message still fails after the
   * retries, rejects with `EmitFailed` and leaves the processor as it was before the
   * event, so the same event can be offered again.
   *
   * @since 0.1.0
   */
  processEvent(event: StreamEvent.StreamEvent): Promise<void> {
    if (this.#destroyed || !validEvent(event)) {
      return this.#run("processEvent", Effect.flatMap(decodeEvent(event), (decoded) => this.#core.process([decoded])))
    }
    // most deltas only grow a buffer: that needs no fiber, and nothing to wait for
    return this.#core.processQuiet(event) ? Promise.resolve() : this.#runPromise(this.#core.process([event]))
  }

  /**
   * Emits every item's content not yet emitted (held items included); items stay open.
   *
   * @since 0.1.0
   */
  flush(): Promise<void> {
    return this.#run("flush", this.#core.flush)
  }

  /**
   * Flushes what is buffered, ends an unfinished turn with `turn_completed` status
   * `aborted`, stops every timer and releases the buffers. Later calls do nothing;
   * other methods reject with `ProcessorDestroyed` afterwards. The Promise rejects with
   * `EmitFailed` when the final flush fails; a caller that does not await it (the
   * first design's `destroy(): void`) never gets an unhandled rejection: the failure is logged
   * (docs/upserts.md#destroy).
   *
   * @since 0.1.0
   */
  destroy(): Promise<void> {
    if (this.#destroyed) return Promise.resolve()
    this.#destroyed = true
    const done = this.#runPromise(Effect.ensuring(this.#core.abort, Scope.close(this.#scope, Exit.void)))
    void done.catch((error: unknown) =>
      Effect.runForkWith(this.#context)(Effect.logError("UpsertStreamProcessor.destroy() failed", error))
    )
    return done
  }

  /**
   * The open items' buffers by item id, in start order (docs/upserts.md's `BufferInfo`).
   *
   * @since 0.1.0
   */
  getBufferState(): Map<string, ItemBuffer.BufferInfo> {
    const buffers = Effect.runSyncWith(this.#context)(this.#core.buffers)
    return new Map(buffers.map((buffer) => [buffer.itemId, ItemBuffer.toBufferInfo(buffer)]))
  }
}
