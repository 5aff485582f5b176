/**
 * Entries through a layer end to end: written in one batch (the batch writes), read
 * back (commands) and followed to the last one (a tail).
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import { RedisStreams } from "../../src/RedisStreams.js"
import { field, type Fields } from "../../src/StreamEntry.js"

const entries = 40

const fieldsOf = (n: number): Fields => [["n", String(n)], ["last", n === entries ? "1" : "0"]]

export const roundTrip = Effect.gen(function*() {
  const redis = yield* RedisStreams
  const key = `sluice-round-trip:{${randomUUID()}}`
  const ids = Array.from({ length: entries }, (_, i) => `0-${i + 1}`)
  const written = yield* redis.xaddAll(key, ids.map((id, i) => ({ id, fields: fieldsOf(i + 1) })))
  expect(written.map((result) => Result.getOrThrow(result))).toStrictEqual(ids)
  expect((yield* redis.xrange(key, "-", "+")).map((entry) => entry.id)).toStrictEqual(ids)
  const followed = yield* redis.tail(key, {
    until: (entry) => Option.contains(field(entry, "last"), "1")
  }).pipe(Stream.runCollect)
  expect(Array.from(followed, (entry) => entry.fields)).toStrictEqual(ids.map((_, i) => fieldsOf(i + 1)))
})
