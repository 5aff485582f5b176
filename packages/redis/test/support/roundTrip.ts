/**
 * One turn through a layer end to end: published (the batch writes), read back
 * (commands) and followed to its end (a tail).
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import { RedisStreams } from "../../src/RedisStreams.js"
import * as TurnEntry from "../../src/TurnEntry.js"
import * as TurnKeys from "../../src/TurnKeys.js"
import * as TurnPublisher from "../../src/TurnPublisher.js"
import { kept, upsertMessages } from "./turns.js"

const prefix = "sluice-round-trip"

export const roundTrip = Effect.gen(function*() {
  const turnId = randomUUID()
  const messages = upsertMessages(turnId, 40)
  yield* Stream.fromIterable(messages).pipe(
    TurnPublisher.publishUpserts(turnId),
    Stream.runDrain,
    Effect.provide(TurnPublisher.layer({ prefix }))
  )
  const redis = yield* RedisStreams
  const key = TurnKeys.upsertsKey(prefix, turnId)
  // Stream B keeps each item's last upsert, under the id it was written with
  const stored = kept(messages)
  expect((yield* redis.xrange(key, "-", "+")).map((entry) => entry.id)).toStrictEqual(stored.map((entry) => entry.id))
  const followed = yield* redis.tail(key, { until: TurnEntry.isFinal }).pipe(
    Stream.mapEffect(TurnEntry.toStreamBMessage),
    Stream.runCollect
  )
  expect(followed).toStrictEqual(stored.map((entry) => entry.message))
})
