/**
 * A turn's stages past the fold as one chain of steps (`internal/engine.ts`): a chunk
 * goes through Stream A, the pipeline's look at it, the upsert stage and Stream B as
 * calls, in that order; the chain ends from Stream A to Stream B, an input's failure
 * passing on after the upsert stage has closed the turn; and a write refused because
 * another writer ended the turn stops the chain where it was met. The writers are
 * stand-ins that log what they are given (`TurnPublisher.writers`' shape).
 */
import { describe, expect, it } from "@effect/vitest"
import type { StreamBMessage, StreamEvent } from "@sluice/core"
import * as F from "@sluice/testing/fixtures"
import { PublishError, type TurnPublisher } from "@sluice/turns"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Stream from "effect/Stream"
import * as Engine from "../src/internal/engine.js"

const ended = new PublishError.PublishError({
  reason: "Ended",
  turnId: F.turnId,
  key: "test:events",
  written: 0,
  detail: "ended by another writer"
})

// Writers that log each write and finish; `refuseEvents` fails Stream A's finish as
// a turn ended by another writer would.
const loggingWriters = (log: Array<string>, refuseEvents = false): TurnPublisher.TurnWriters => {
  const write = <A, E, R>(
    name: string,
    describe: (value: A) => string,
    values: ReadonlyArray<A>,
    onPassed: (passed: Arr.NonEmptyReadonlyArray<A>) => Effect.Effect<void, E, R>
  ): Effect.Effect<void, E, R> =>
    Effect.suspend(() => {
      log.push(`${name} ${values.map(describe).join(",")}`)
      return Arr.isReadonlyArrayNonEmpty(values) ? onPassed(values) : Effect.void
    })
  return {
    events: (events, onPassed) => write("A", (event: StreamEvent.StreamEvent) => event.payload.type, events, onPassed),
    upserts: (messages, onPassed) =>
      write("B", (message: StreamBMessage.StreamBMessage) => message.payloadType, messages, onPassed),
    finishEvents: refuseEvents ? Effect.fail(ended) : Effect.sync(() => log.push("A finished")),
    finishUpserts: Effect.sync(() => log.push("B finished"))
  }
}

// The pipeline's chain on the logging writers: Stream A -> a look -> upserts -> Stream B -> told.
const runChain = <E>(input: Stream.Stream<StreamEvent.StreamEvent, E>, log: Array<string>, refuseEvents = false) =>
  Effect.gen(function*() {
    const writers = loggingWriters(log, refuseEvents)
    const told = Engine.sink<StreamBMessage.StreamBMessage, E | Engine.Failure>((passed) =>
      Effect.sync(() => log.push(`told ${passed.length}`))
    )
    const upserts = yield* Engine.upserts(
      { turnId: F.turnId, threadId: F.threadId, batchGradient: [1] },
      Engine.upsertsWriter(writers, told)
    )
    const looked = Engine.tap(
      (chunk) => Effect.sync(() => log.push(`before ${chunk.length}`)),
      (chunk) => Effect.sync(() => log.push(`after ${chunk.length}`)),
      upserts
    )
    return yield* Effect.exit(Engine.run(input, Engine.eventsWriter(writers, looked)))
  }).pipe(Effect.scoped)

// What a chunk of one `response_start` comes to: Stream A, the look before, Stream B's
// `turn_started`, told, the look after.
const startPushed = ["A response_start", "before 1", "B turn_event", "told 1", "after 1"]

describe("the chain of a turn's stages", () => {
  it.effect(
    "takes each chunk through Stream A, the look, the upsert stage and Stream B, then ends in that order",
    () =>
      Effect.gen(function*() {
        const log: Array<string> = []
        const exit = yield* runChain(
          Stream.fromArrays(
            [F.responseStart(), F.itemStart("m1", "message")],
            [F.messageDone("m1", "hi"), F.responseDone()]
          ),
          log
        )
        expect(Exit.isSuccess(exit)).toBe(true)
        expect(log).toEqual([
          "A response_start,item_start",
          "before 2",
          "B turn_event",
          "told 1",
          "after 2",
          "A item_done,response_done",
          "before 2",
          "B item_upsert,turn_event",
          "told 2",
          "after 2",
          "A finished",
          "B finished"
        ])
      }),
    30_000
  )

  it.effect(
    "passes an input's failure on after the upsert stage closed the turn, and leaves both streams unfinished",
    () =>
      Effect.gen(function*() {
        const log: Array<string> = []
        const exit = yield* runChain(
          Stream.concat(Stream.make(F.responseStart()), Stream.fail("the body was cut")),
          log
        )
        expect(exit).toEqual(Exit.fail("the body was cut"))
        expect(log).toEqual([...startPushed, "B turn_event", "told 1"])
      }),
    30_000
  )

  it.effect(
    "stops at a write refused because another writer ended the turn: the upsert stage is not ended",
    () =>
      Effect.gen(function*() {
        const log: Array<string> = []
        const exit = yield* runChain(Stream.make(F.responseStart()), log, true)
        expect(Engine.endedElsewhere(exit)).toBe(true)
        expect(log).toEqual(startPushed)
      }),
    30_000
  )
})
