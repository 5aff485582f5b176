/**
 * The accumulator's memory and speed on one 10 MB message of small deltas: the heap
 * the final `Turn` keeps (after a full GC) relative to the content it saw, next to a
 * plain `+=` concatenation of the same deltas (the least any holder of the content can
 * keep), and events per second through `Accumulator.runTurn`.
 *
 * Run with `node --expose-gc --import tsx`: without `global.gc` the heap figures
 * include garbage and are marked as such.
 */
import { Accumulator } from "@sluice/accumulator"
import { StreamEvent } from "@sluice/core"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { performance } from "node:perf_hooks"

const contentBytes = 10 * 1024 * 1024
/** Below V8's 13-character minimum for cons strings, so every delta is its own flat string, as JSON.parse gives them. */
const deltaSize = 12
const deltas = Math.ceil(contentBytes / deltaSize)
const runId = "5d3f1c2a-8a61-4c4e-9f3b-1e2d3c4b5a69"
const eventId = "00000000-0000-4000-8000-000000000000"

const gcFunction: unknown = Reflect.get(globalThis, "gc")
const gc = typeof gcFunction === "function" ? () => Reflect.apply(gcFunction, undefined, []) : undefined

const heapUsed = (): number => {
  gc?.()
  gc?.()
  return process.memoryUsage().heapUsed
}

const delta = (i: number): string => ("000000000000" + i.toString(36)).slice(-deltaSize)

const event = (payload: StreamEvent.Payload): StreamEvent.StreamEvent =>
  StreamEvent.envelope({ runId }, payload, eventId, 1)

/** The turn's events, made lazily so the input never sits in memory whole. */
function* events(finish: boolean): Generator<StreamEvent.StreamEvent> {
  yield event({
    type: "response_start",
    response_id: runId,
    turn_id: runId,
    thread_id: runId,
    model_id: "bench",
    provider_id: "bench",
    created_at: 1
  })
  yield event({ type: "item_start", item_id: "item_0", item_type: "message" })
  for (let i = 0; i < deltas; i++) yield event({ type: "item_delta", item_id: "item_0", delta_content: delta(i) })
  if (!finish) return
  const content = Array.from({ length: deltas }, (_, i) => delta(i)).join("")
  yield event({
    type: "item_done",
    item_id: "item_0",
    final_item: { type: "message", id: "item_0", content, origin: "agent" }
  })
  yield event({ type: "response_done", response_id: runId, status: "complete", finish_reason: "stop" })
}

const runTurn = (finish: boolean) => Effect.runPromise(Accumulator.runTurn(Stream.fromIterable(events(finish))))

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`

/** Runs the measurements and returns them as a Markdown section. */
export const run = async (): Promise<string> => {
  const content = deltas * deltaSize

  let base = heapUsed()
  let plain = ""
  for (let i = 0; i < deltas; i++) plain += delta(i)
  const plainGrowth = heapUsed() - base
  const plainLength = plain.length
  plain = ""

  base = heapUsed()
  const streaming = await runTurn(false)
  const streamingGrowth = heapUsed() - base
  const streamed = streaming.items[0]?.content.length ?? 0

  base = heapUsed()
  const finished = await runTurn(true)
  const finishedGrowth = heapUsed() - base
  const finalLength = finished.items[0]?.content.length ?? 0

  const times: Array<number> = []
  for (let round = 0; round < 3; round++) {
    const start = performance.now()
    await runTurn(true)
    times.push((performance.now() - start) / 1000)
  }
  times.sort((a, b) => a - b)
  const seconds = times[1]!
  const eventCount = deltas + 4

  const note = gc === undefined ? " (no global.gc: figures include garbage; run with --expose-gc)" : ""
  return [
    `\n## accumulator: one ${mb(content)} message in ${
      deltas.toLocaleString("en-US")
    } deltas of ${deltaSize} bytes${note}`,
    "",
    "| case | heap kept | per content byte |",
    "|---|---:|---:|",
    `| plain \`+=\` of the deltas (reference, ${plainLength.toLocaleString("en-US")} chars) | ${mb(plainGrowth)} | ${
      (plainGrowth / content).toFixed(2)
    } |`,
    `| Turn after the deltas, before item_done (${streamed.toLocaleString("en-US")} chars) | ${mb(streamingGrowth)} | ${
      (streamingGrowth / content).toFixed(2)
    } |`,
    `| Turn after item_done and response_done (${finalLength.toLocaleString("en-US")} chars) | ${
      mb(finishedGrowth)
    } | ${(finishedGrowth / content).toFixed(2)} |`,
    "",
    `Turn before item_done / plain \`+=\`: ${(streamingGrowth / plainGrowth).toFixed(2)}x.`,
    `runTurn: ${Math.round(eventCount / seconds).toLocaleString("en-US")} events/s, ${
      (content / seconds / 1e6).toFixed(1)
    } MB/s of content (median of 3).`
  ].join("\n")
}
