/**
 * Shared helpers of the Anthropic and OpenAI Chat normalizer tests: reading recorded
 * transcripts, running a normalizer over any split of a body, and comparing events
 * without their random ids and timestamps.
 */
import { Sse, type StreamEvent } from "@sluice/core"
import { yieldToEventLoop } from "@sluice/testing/eventLoop"
import { transcriptPath } from "@sluice/testing/fixtures"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { readFileSync } from "node:fs"
import type { DecodeSse, Normalize, NormalizeOptions } from "../../src/Normalizer.js"

/** A body recorded by another project's test suite, `recorded/<provider>/<name>` of the shared transcripts. */
export const recorded = (provider: string, name: string): string =>
  readFileSync(transcriptPath("recorded", provider, name), "utf8")

/** One of the providers' transcripts, `<provider>/<name>` of the shared transcripts. */
export const own = (provider: string, name: string): string => readFileSync(transcriptPath(provider, name), "utf8")

/** A parsed JSON fixture of the package's own. */
export const ownJson = (provider: string, name: string): unknown => JSON.parse(own(provider, name))

/** Fixed turn identifiers, so that two runs over the same body give equal payloads. */
export const options: NormalizeOptions = {
  runId: "00000000-0000-4000-8000-000000000001",
  turnId: "00000000-0000-4000-8000-000000000002",
  threadId: "00000000-0000-4000-8000-000000000003"
}

const encoder = new TextEncoder()

/** The bytes of a body. */
export const bytes = (text: string): Uint8Array => encoder.encode(text)

/** Splits bytes at the given cut points (taken modulo the length, sorted, deduplicated). */
export const splitAt = (body: Uint8Array, cuts: ReadonlyArray<number>): Array<Uint8Array> => {
  const points = [...new Set(cuts.map((cut) => cut % (body.length + 1)))].sort((a, b) => a - b)
  const reads: Array<Uint8Array> = []
  let from = 0
  for (const point of points) {
    reads.push(body.subarray(from, point))
    from = point
  }
  reads.push(body.subarray(from))
  return reads
}

/**
 * Runs SSE framing and a normalizer over the given reads and collects the events,
 * after a turn of the event loop (property tests run this hundreds of times).
 */
export const runReads = (normalize: Normalize, reads: ReadonlyArray<Uint8Array>) =>
  Effect.andThen(
    yieldToEventLoop,
    Stream.fromIterable(reads).pipe(
      Sse.decode(),
      normalize(options),
      Stream.runCollect
    )
  )

/**
 * What a run over the given reads, each its own chunk (`oneByOne`) or all in one, came
 * to: every event it gave (without ids and times), and its typed failure if any.
 */
const outcomeOf = <E extends { readonly _tag: string; readonly message: string }>(
  events: Stream.Stream<StreamEvent.StreamEvent, E>
) =>
  Effect.gen(function*() {
    yield* yieldToEventLoop
    const seen: Array<StreamEvent.StreamEvent> = []
    const exit = yield* Effect.exit(Stream.runForEach(events, (event) => Effect.sync(() => seen.push(event))))
    return {
      events: payloads(seen),
      failure: Exit.isSuccess(exit)
        ? undefined
        : Option.getOrUndefined(Option.map(Cause.findErrorOption(exit.cause), (error) => [error._tag, error.message]))
    }
  })

const chunked = (reads: ReadonlyArray<Uint8Array>, oneByOne: boolean) =>
  oneByOne ? Stream.rechunk(Stream.fromIterable(reads), 1) : Stream.fromIterable(reads)

/** A provider's `decodeSse` (framing and normalizing in one step) over the given reads. */
export const decodeSseOutcome = (decodeSse: DecodeSse, reads: ReadonlyArray<Uint8Array>, oneByOne: boolean) =>
  outcomeOf(decodeSse(options)(chunked(reads, oneByOne)))

/** The same reads through `Sse.decode()` then `normalize`. */
export const stagesOutcome = (normalize: Normalize, reads: ReadonlyArray<Uint8Array>, oneByOne: boolean) =>
  outcomeOf(chunked(reads, oneByOne).pipe(Sse.decode(), normalize(options)))

/** Runs SSE framing and a normalizer over a whole body. */
export const runText = (normalize: Normalize, text: string) => runReads(normalize, [bytes(text)])

/** The payloads of events: what remains once random ids and timestamps are set aside. */
export const payloads = (events: ReadonlyArray<StreamEvent.StreamEvent>): Array<StreamEvent.Payload> =>
  events.map((event) => {
    const payload = event.payload
    return payload.type === "response_start" ? { ...payload, created_at: 0 } : payload
  })

/** The payloads of one type. */
export const ofType = <T extends StreamEvent.PayloadType>(events: ReadonlyArray<StreamEvent.StreamEvent>, type: T) =>
  events.flatMap((event) => (event.payload.type === type ? [event.payload as StreamEvent.PayloadOf<T>] : []))

/** The final items of the `item_done` events, in order. */
export const finals = (events: ReadonlyArray<StreamEvent.StreamEvent>) =>
  ofType(events, "item_done").map((done) => done.final_item)

/** The `response_done` payload (the last event). */
export const done = (events: ReadonlyArray<StreamEvent.StreamEvent>) => {
  const last = ofType(events, "response_done")
  return last[last.length - 1]
}

/** The `response_error` payloads' error objects. */
export const errors = (events: ReadonlyArray<StreamEvent.StreamEvent>) =>
  ofType(events, "response_error").map((e) => e.error)

/** One random edit of a body: flip a byte, delete a byte, or insert a byte. */
export type Edit = readonly ["flip" | "delete" | "insert", number, number]

/** Applies edits to a copy of the bytes (positions taken modulo the length). */
export const corrupt = (body: Uint8Array, edits: ReadonlyArray<Edit>): Uint8Array => {
  const out = Array.from(body)
  for (const [kind, position, value] of edits) {
    const at = position % (out.length + 1)
    if (kind === "insert") out.splice(at, 0, value & 0xff)
    else if (out.length > 0) {
      const index = at % out.length
      if (kind === "delete") out.splice(index, 1)
      else out[index] = out[index]! ^ (value & 0xff || 1)
    }
  }
  return Uint8Array.from(out)
}
