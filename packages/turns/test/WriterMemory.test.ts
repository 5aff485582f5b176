/**
 * What a turn's writes hold while Redis has not answered: their events (the caller
 * holds them anyway), not the events' JSON. A delta's fields are made when its entry
 * is written, and again for a retry (counted on the heap, against a store that reads
 * every entry's fields as the live layer's encoder does, then never answers).
 */
import { describe, expect, it } from "@effect/vitest"
import { Ids, StreamEvent } from "@sluice/core"
import { RedisStreams } from "@sluice/redis/RedisStreams"
import * as RedisStreamsMemory from "@sluice/redis/RedisStreamsMemory"
import { heapAfterCollection } from "@sluice/testing/heap"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as TurnPublisher from "../src/TurnPublisher.js"

describe("a turn's writes waiting for Redis", () => {
  it.effect("hold their events, not the events' JSON", () =>
    Effect.gen(function*() {
      const memory = yield* RedisStreamsMemory.make
      let written = 0
      const silent: typeof memory = {
        ...memory,
        xaddAll: (_key, entries) =>
          Effect.andThen(
            Effect.sync(() => {
              // as an encoder does: each entry's fields read once, then let go
              for (const entry of entries) if (entry.fields.length > 0) written++
            }),
            Effect.never
          )
      }
      const publisher = yield* TurnPublisher.make({ indexTurns: false }).pipe(
        Effect.provideService(RedisStreams, silent)
      )
      const turns = 100
      const perTurn = 64
      // one content string shared by every event: its JSON would be a copy per event
      const content = "x".repeat(4096)
      const runId = Ids.generateEventId()
      const chunks = Array.from({ length: turns }, () =>
        Arr.makeBy(perTurn, () =>
          StreamEvent.envelope(
            { runId },
            { type: "item_delta", item_id: "item_0", delta_content: content },
            Ids.generateEventId(),
            1_700_000_000_000
          )))
      const writers = yield* Effect.forEach(chunks, () => publisher.writers(Ids.generateEventId()))
      const before = heapAfterCollection()
      yield* Effect.forEach(
        chunks,
        (chunk, i) =>
          Effect.forkChild(
            writers[i]!.events(chunk, () => Effect.void)
          ),
        { discard: true }
      )
      while (written < turns * perTurn) yield* Effect.yieldNow
      const kept = heapAfterCollection() - before
      // as JSON, the waiting entries would hold 100 x 64 x 4 KB = 25 MB
      expect(kept).toBeLessThan(turns * perTurn * content.length / 8)
    }).pipe(Effect.scoped), 60_000)
})
