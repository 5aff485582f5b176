/**
 * Publishes turns to Redis: StreamEvents to Stream A (`<prefix>:turn:{turnId}:events`)
 * and StreamBMessages to Stream B (`<prefix>:turn:{turnId}:upserts`), as stream
 * transformers that pass every element on once Redis has confirmed it.
 *
 * Each stream of a turn is written exactly once and in order: the n-th entry gets the
 * explicit id `0-<n>`, so a write repeated after a lost reply is recognised (Redis
 * refuses the id as too small, the publisher reads the entry under it and finds its
 * own fields) and never duplicated. Writes retry with docs/upserts.md's policy while Redis is
 * unavailable; when the policy gives up, the stream fails with a `PublishError`, after
 * passing on exactly the elements that were confirmed. At most `maxInFlight` entries
 * per stream are unconfirmed at a time (one pipeline), which bounds memory and pushes
 * back on the producer. Stream B keeps one upsert per item: once an item's newer
 * upsert (which carries the item's whole content) is confirmed, the older one is
 * deleted, so the stream grows with the content, not with the number of upserts. Every
 * write trims the stream to about `maxLen` entries; the
 * keys get a retention of `retentionMs` on the first write and again when the turn's
 * stream ends, and the turn id is recorded in the index of recent turns. Each batch
 * updates `TurnMetrics` (entries, publish latency, retries).
 *
 * @since 0.3.0
 */
import type { StreamBMessage } from "@sluice/core"
import { Backoff, Ids, SchemaDecode, type StreamEvent } from "@sluice/core"
import type { RedisError } from "@sluice/redis/RedisError"
import { RedisStreams, type RedisStreamsService } from "@sluice/redis/RedisStreams"
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { topLevelString } from "./internal/topLevelField.js"
import { core, sequential, writer, type WriterTarget } from "./internal/turnWriter.js"
import { InvalidPublisherOptions, PublishError } from "./PublishError.js"
import * as TurnEntry from "./TurnEntry.js"
import * as TurnKeys from "./TurnKeys.js"
import * as TurnMetrics from "./TurnMetrics.js"

const PositiveInt = Schema.Int.check(Schema.isGreaterThan(0))

const withDefault = <S extends Schema.Constraint>(value: S["Type"]) =>
  Schema.withDecodingDefaultTypeKey<S>(Effect.succeed(value))

/**
 * The publisher's options, with their defaults:
 *
 * - `prefix` (`codex`): the first part of every key.
 * - `keyStyle` (`tagged`): `plain` writes the first design's stream keys,
 *   `<prefix>:turn:<turnId>:<stream>`, for readers written to the seed; Sluice's own
 *   readers read the tagged keys (docs/redis.md#key-styles).
 * - `retentionMs` (24 h): how long a turn's keys live after its last write.
 * - `maxLen` (100000): the `MAXLEN ~` cap of each stream.
 * - `maxInFlight` (64): the most unconfirmed writes per stream of a turn.
 * - `indexTurns` (true): record each turn in `<prefix>:turns`.
 * - `keepSuperseded` (false): keep every upsert in Stream B instead of each item's
 *   last one (a stream that grows with the square of a message's length; for
 *   debugging, or readers that want every intermediate state).
 * - `retryAttempts` (3), `retryBaseMs` (1000), `retryMaxMs` (10000): docs/upserts.md's retry
 *   policy (core's `Backoff`), shared with the upsert stage.
 *
 * @since 0.3.0
 * @category schemas
 */
export const TurnPublisherOptions = Schema.Struct({
  prefix: Schema.Trimmed.check(Schema.isNonEmpty(), Schema.isPattern(/^[^\s{}]+$/)).pipe(
    withDefault(TurnKeys.defaultPrefix)
  ),
  keyStyle: Schema.Literals(["tagged", "plain"]).pipe(withDefault<Schema.Literals<readonly ["tagged", "plain"]>>(
    TurnKeys.defaultKeyStyle
  )),
  retentionMs: PositiveInt.pipe(withDefault(24 * 60 * 60 * 1000)),
  maxLen: PositiveInt.pipe(withDefault(100_000)),
  maxInFlight: PositiveInt.pipe(withDefault(64)),
  indexTurns: Schema.Boolean.pipe(withDefault(true)),
  keepSuperseded: Schema.Boolean.pipe(withDefault(false)),
  ...Backoff.RetryOptions.fields
}).annotate({ identifier: "TurnPublisherOptions" })

/**
 * Options with defaults applied.
 *
 * @since 0.3.0
 * @category models
 */
export type ResolvedOptions = typeof TurnPublisherOptions.Type

/**
 * Options as a caller writes them: every field optional.
 *
 * @since 0.3.0
 * @category models
 */
export type Options = typeof TurnPublisherOptions.Encoded

/**
 * The publisher.
 *
 * @since 0.3.0
 * @category models
 */
export interface TurnPublisherService {
  readonly options: ResolvedOptions
  /**
   * Publishes a turn's StreamEvents to its Stream A, passing each on once written.
   */
  readonly events: (
    turnId: string
  ) => <E, R>(
    self: Stream.Stream<StreamEvent.StreamEvent, E, R>
  ) => Stream.Stream<StreamEvent.StreamEvent, E | PublishError, R>
  /**
   * Publishes a turn's StreamBMessages to its Stream B, passing each on once written.
   * A message of another turn fails the stream with `InvalidInput`.
   */
  readonly upserts: (
    turnId: string
  ) => <E, R>(
    self: Stream.Stream<StreamBMessage.StreamBMessage, E, R>
  ) => Stream.Stream<StreamBMessage.StreamBMessage, E | PublishError, R>
  /**
   * A turn's two writers as effects, for a runner that drives a turn's stages itself:
   * the same ids, batches, retries and deletes as `events` and `upserts`. Fails with
   * `InvalidInput` when the turn id is not a UUID.
   */
  readonly writers: (turnId: string) => Effect.Effect<TurnWriters, PublishError>
}

/**
 * A turn's writers: `events` and `upserts` write values in pieces of at most
 * `maxInFlight`, telling `onPassed` what each piece Redis confirmed, in order; the
 * first failure stops a writer, and every later write to it fails the same way.
 * `finish` closes one stream (deletes what is left superseded, sets the retention).
 *
 * @since 0.3.0
 * @category models
 */
export interface TurnWriters {
  readonly events: <E, R>(
    events: ReadonlyArray<StreamEvent.StreamEvent>,
    onPassed: (passed: Arr.NonEmptyReadonlyArray<StreamEvent.StreamEvent>) => Effect.Effect<void, E, R>
  ) => Effect.Effect<void, E | PublishError, R>
  readonly upserts: <E, R>(
    messages: ReadonlyArray<StreamBMessage.StreamBMessage>,
    onPassed: (passed: Arr.NonEmptyReadonlyArray<StreamBMessage.StreamBMessage>) => Effect.Effect<void, E, R>
  ) => Effect.Effect<void, E | PublishError, R>
  readonly finishEvents: Effect.Effect<void, PublishError>
  readonly finishUpserts: Effect.Effect<void, PublishError>
}

/**
 * The turn publisher.
 *
 * @since 0.3.0
 * @category tags
 */
export class TurnPublisher extends Context.Service<TurnPublisher, TurnPublisherService>()(
  "@sluice/turns/TurnPublisher"
) {}

// The Redis service with its batch writes measured: the entries confirmed, the time
// to confirm a batch, and the writes that found Redis unavailable. Recorded in one step
// once the write is over (a batch of one entry is common at live pace, so the
// bookkeeping stays a few operations), under the metric registry and attributes of the
// writing fiber's context.
const measured = (redis: RedisStreamsService, stream: TurnKeys.TurnStream, clock: Clock.Clock): RedisStreamsService => {
  const entries = TurnMetrics.entries(stream)
  const latency = TurnMetrics.publishLatency(stream)
  const retries = TurnMetrics.publishRetries(stream)
  const record = (
    exit: Exit.Exit<ReadonlyArray<Result.Result<string, RedisError>>, RedisError>,
    start: bigint,
    context: Context.Context<never>
  ): void => {
    if (Exit.isFailure(exit)) {
      const error = Cause.findErrorOption(exit.cause)
      if (Option.isSome(error) && error.value.reason === "Unavailable") retries.updateUnsafe(1, context)
      return
    }
    let confirmed = 0
    let unavailable = false
    for (const result of exit.value) {
      if (Result.isSuccess(result)) confirmed++
      else if (result.failure.reason === "Unavailable") unavailable = true
    }
    latency.updateUnsafe(Number(clock.currentTimeNanosUnsafe() - start) / 1e9, context)
    entries.updateUnsafe(confirmed, context)
    if (unavailable) retries.updateUnsafe(1, context)
  }
  return {
    ...redis,
    xaddAll: (key, batch, options) =>
      Effect.suspend(() => {
        const start = clock.currentTimeNanosUnsafe()
        return Effect.onExit(
          redis.xaddAll(key, batch, options),
          (exit) =>
            Effect.contextWith((context: Context.Context<never>) => Effect.sync(() => record(exit, start, context)))
        )
      })
  }
}

// An upsert's item id, read from its payload without parsing the content.
const upsertItem = (message: StreamBMessage.StreamBMessage): string | undefined =>
  message.payloadType === "item_upsert" ? topLevelString(message.payload, "itemId") : undefined

const decodeOptions = SchemaDecode.decodeUnknown(TurnPublisherOptions, { errors: "all", onExcessProperty: "error" })

/**
 * Builds a publisher on the `RedisStreams` in context. Fails with
 * `InvalidPublisherOptions`, naming each bad field, when the options are invalid.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = (
  options: Options = {}
): Effect.Effect<TurnPublisherService, InvalidPublisherOptions, RedisStreams> =>
  Effect.gen(function*() {
    const resolved = yield* Effect.mapError(
      decodeOptions(options),
      (error) => new InvalidPublisherOptions({ detail: error.message })
    )
    const redis = yield* RedisStreams
    const clock = yield* Clock.Clock
    const redisFor = { events: measured(redis, "events", clock), upserts: measured(redis, "upserts", clock) }
    const invalid = (turnId: string, stream: TurnKeys.TurnStream, detail: string, cause?: unknown) =>
      new PublishError({
        reason: "InvalidInput",
        turnId,
        key: TurnKeys.streamKey(resolved.prefix, turnId, stream, resolved.keyStyle),
        written: 0,
        detail,
        ...(cause === undefined ? {} : { cause })
      })
    const writerOptions = {
      prefix: resolved.prefix,
      keyStyle: resolved.keyStyle,
      retentionMs: resolved.retentionMs,
      maxLen: resolved.maxLen,
      maxInFlight: resolved.maxInFlight,
      indexTurns: resolved.indexTurns,
      retry: {
        retryAttempts: resolved.retryAttempts,
        retryBaseMs: resolved.retryBaseMs,
        retryMaxMs: resolved.retryMaxMs
      }
    }
    const checked = <A, E, R>(
      turnId: string,
      stream: TurnKeys.TurnStream,
      publish: (self: Stream.Stream<A, E, R>) => Stream.Stream<A, E | PublishError, R>
    ) =>
    (self: Stream.Stream<A, E, R>): Stream.Stream<A, E | PublishError, R> =>
      Ids.isUuid(turnId)
        ? publish(self)
        : Stream.fail(invalid(turnId, stream, `turn id ${JSON.stringify(turnId)} is not a UUID`))

    const eventsTarget = (turnId: string): WriterTarget<StreamEvent.StreamEvent> => ({
      turnId,
      stream: "events",
      toFields: (event) =>
        Result.mapError(
          TurnEntry.fromStreamEvent(turnId, event),
          (error) => invalid(turnId, "events", `event ${event.event_id} is invalid: ${error.message}`, error)
        ),
      fieldsLater: (event) => TurnEntry.deltaFieldsLater(turnId, event)
    })
    const upsertsTarget = (turnId: string): WriterTarget<StreamBMessage.StreamBMessage> => ({
      turnId,
      stream: "upserts",
      toFields: (message) =>
        message.turnId === turnId
          ? Result.succeed(TurnEntry.fromStreamBMessage(message))
          : Result.fail(invalid(turnId, "upserts", `message ${message.eventId} belongs to turn ${message.turnId}`)),
      slotOf: resolved.keepSuperseded ? undefined : upsertItem
    })

    const service: TurnPublisherService = {
      options: resolved,
      events: (turnId) => (self) =>
        checked(turnId, "events", writer(redisFor.events, writerOptions, eventsTarget(turnId)))(self),
      upserts: (turnId) => (self) =>
        checked(turnId, "upserts", writer(redisFor.upserts, writerOptions, upsertsTarget(turnId)))(self),
      writers: (turnId) =>
        Effect.suspend(() => {
          if (!Ids.isUuid(turnId)) {
            return Effect.fail(invalid(turnId, "events", `turn id ${JSON.stringify(turnId)} is not a UUID`))
          }
          const events = core(redisFor.events, writerOptions, eventsTarget(turnId))
          const upserts = core(redisFor.upserts, writerOptions, upsertsTarget(turnId))
          return Effect.succeed<TurnWriters>({
            events: sequential(events, resolved.maxInFlight),
            upserts: sequential(upserts, resolved.maxInFlight),
            finishEvents: events.finish,
            finishUpserts: upserts.finish
          })
        })
    }
    return service
  })

/**
 * A publisher layer on the `RedisStreams` layer it is given.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer = (options: Options = {}): Layer.Layer<TurnPublisher, InvalidPublisherOptions, RedisStreams> =>
  Layer.effect(TurnPublisher, make(options))

/**
 * Publishes a turn's StreamEvents to Stream A with the `TurnPublisher` in context,
 * passing each event on once Redis has confirmed it.
 *
 * @since 0.3.0
 * @category transformers
 */
export const publishEvents = (turnId: string) =>
<E, R>(
  self: Stream.Stream<StreamEvent.StreamEvent, E, R>
): Stream.Stream<StreamEvent.StreamEvent, E | PublishError, R | TurnPublisher> =>
  Stream.unwrap(TurnPublisher.useSync((publisher) => publisher.events(turnId)(self)))

/**
 * Publishes a turn's StreamBMessages to Stream B with the `TurnPublisher` in context,
 * passing each message on once Redis has confirmed it.
 *
 * @since 0.3.0
 * @category transformers
 */
export const publishUpserts = (turnId: string) =>
<E, R>(
  self: Stream.Stream<StreamBMessage.StreamBMessage, E, R>
): Stream.Stream<StreamBMessage.StreamBMessage, E | PublishError, R | TurnPublisher> =>
  Stream.unwrap(TurnPublisher.useSync((publisher) => publisher.upserts(turnId)(self)))
