/**
 * Serving the API in a test (real HTTP on loopback, a free port) on the `RedisStreams`
 * in context, and publishing turns into that store.
 */
import type { StreamBMessage, StreamEvent } from "@sluice/core"
import { RedisStreams } from "@sluice/redis"
import * as TurnServer from "@sluice/server/TurnServer"
import type * as TurnServerOptions from "@sluice/server/TurnServerOptions"
import { TurnKeys, TurnPublisher } from "@sluice/turns"
import { StreamBMessages, UpsertStream } from "@sluice/upserts"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { quietLogs } from "./quietLogs.js"

export const tokens = ["token-alpha-0123456789", "token-beta-9876543210"] as const
export const prefix = "sluice-server-test"

/**
 * Serves the API on 127.0.0.1 and a free port with the test prefix and the options
 * as given, its INFO log lines left out of the test output (`quietLogs`); the base
 * URL, e.g. `http://127.0.0.1:1234`.
 */
export const serveWith = (
  options: TurnServerOptions.Options
): Effect.Effect<string, unknown, Scope.Scope | RedisStreams.RedisStreams> =>
  Effect.gen(function*() {
    const context = yield* quietLogs(Layer.build(TurnServer.layer({ port: 0, host: "127.0.0.1", prefix, ...options })))
    const address = yield* Effect.provide(TurnServer.address, context)
    if (address._tag === "UnixPathAddress") return yield* Effect.die(new Error("expected a TCP address"))
    return `http://127.0.0.1:${address.port}`
  })

/** `serveWith` the test tokens. */
export const serve = (options: TurnServerOptions.Options = {}) => serveWith({ tokens: [...tokens], ...options })

// Stream B keeps every upsert here, so that tests can follow a finished turn entry by
// entry; Storage.test.ts publishes with the default (each item's last upsert).
export const publisher = TurnPublisher.layer({ prefix, retryBaseMs: 0, retryMaxMs: 0, keepSuperseded: true })

/** The publisher with the default layout of Stream B: each item's last upsert. */
export const trimmingPublisher = TurnPublisher.layer({ prefix, retryBaseMs: 0, retryMaxMs: 0 })

// Runs a publishing stream with the test publisher; what it passed on.
const published = <A, E>(stream: Stream.Stream<A, E, TurnPublisher.TurnPublisher>) =>
  stream.pipe(Stream.runCollect, Effect.provide(publisher))

/** Publishes Stream B messages of a turn; what the publisher passed on. */
export const publishUpserts = (turnId: string, messages: ReadonlyArray<StreamBMessage.StreamBMessage>) =>
  published(Stream.fromIterable(messages).pipe(TurnPublisher.publishUpserts(turnId)))

/** Publishes Stream A events of a turn. */
export const publishEvents = (turnId: string, events: ReadonlyArray<StreamEvent.StreamEvent>) =>
  published(Stream.fromIterable(events).pipe(TurnPublisher.publishEvents(turnId)))

/**
 * Publishes a turn's first `first` events to Stream A and waits until Redis has them;
 * the rest follow once `release` runs (a turn running mid-way, in the test's scope).
 */
export const publishHalted = (turnId: string, events: ReadonlyArray<StreamEvent.StreamEvent>, first: number) =>
  Effect.gen(function*() {
    const gate = yield* Deferred.make<void>()
    const confirmed = yield* Queue.unbounded<StreamEvent.StreamEvent>()
    yield* Stream.fromIterable(events.slice(0, first)).pipe(
      Stream.concat(Stream.drain(Stream.fromEffect(Deferred.await(gate)))),
      Stream.concat(Stream.fromIterable(events.slice(first))),
      TurnPublisher.publishEvents(turnId),
      Stream.runForEach((event) => Queue.offer(confirmed, event)),
      Effect.provide(publisher),
      Effect.orDie,
      Effect.forkScoped
    )
    yield* Queue.takeN(confirmed, first)
    return { release: Deferred.succeed(gate, undefined) }
  })

/**
 * The whole pipeline: a turn's events to Stream A, through the upsert stage, to
 * Stream B. The Stream B messages the stage emitted (and the publisher wrote).
 */
export const publishTurn = (turnId: string, events: ReadonlyArray<StreamEvent.StreamEvent>) =>
  published(
    Stream.fromIterable(events).pipe(
      TurnPublisher.publishEvents(turnId),
      UpsertStream.upserts(),
      StreamBMessages.wrap,
      TurnPublisher.publishUpserts(turnId)
    )
  )

/** What the SSE endpoint should send for published Stream B messages, from entry `0-<from+1>`. */
export const expectedFrames = (messages: ReadonlyArray<StreamBMessage.StreamBMessage>, from = 0) =>
  messages.slice(from).map((message, i) => ({
    id: `0-${from + i + 1}`,
    event: message.payloadType,
    data: message.payload
  }))

export interface Producer {
  /** Lets `n` more messages through the publisher and waits until Redis has them. */
  readonly release: (n: number) => Effect.Effect<ReadonlyArray<StreamBMessage.StreamBMessage>>
}

/**
 * A producer of one turn that publishes its messages through one `TurnPublisher`
 * stream, only as far as the test lets it: a turn in progress.
 */
export const producer = (
  turnId: string,
  messages: ReadonlyArray<StreamBMessage.StreamBMessage>
): Effect.Effect<Producer, never, Scope.Scope | RedisStreams.RedisStreams> =>
  Effect.gen(function*() {
    const gate = yield* Queue.unbounded<void>()
    const confirmed = yield* Queue.unbounded<StreamBMessage.StreamBMessage>()
    yield* Stream.fromIterable(messages).pipe(
      Stream.rechunk(1),
      Stream.tap(() => Queue.take(gate)),
      TurnPublisher.publishUpserts(turnId),
      Stream.runForEach((message) => Queue.offer(confirmed, message)),
      Effect.provide(publisher),
      Effect.orDie,
      Effect.forkScoped
    )
    return {
      release: (n) =>
        Effect.andThen(
          Queue.offerAll(gate, Array.from({ length: n }, () => undefined)),
          Queue.takeN(confirmed, n)
        )
    }
  })

/** A producer's lease on a turn as `TurnLease.hold` takes it, never renewed: it lapses after `leaseMs`. */
export const unrenewedLease = (turnId: string, leaseMs = 6_000) =>
  RedisStreams.RedisStreams.use((redis) =>
    Effect.andThen(
      redis.setPx(TurnKeys.leasedKey(prefix, turnId), "1", 60_000),
      redis.setPx(TurnKeys.leaseKey(prefix, turnId), "1", leaseMs)
    )
  )
