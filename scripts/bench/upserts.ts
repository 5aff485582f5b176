/**
 * The upsert stage: events per second through `UpsertStream.upserts` for 1,000
 * concurrent turns of 500 deltas each, next to a plain loop that only concatenates the
 * deltas (the floor for anything that keeps the content), and the Promise facade; plus
 * how many upserts the gradient made of the deltas.
 */
import type { StreamEvent } from "@sluice/core"
import { Ids, StreamEvent as Events } from "@sluice/core"
import { UpsertStream, UpsertStreamProcessor } from "@sluice/upserts"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { measure, report } from "./harness.js"

const TURNS = 1000
const DELTAS = 500

// Delta lengths cycle through 1..29 characters (about 15 on average, ~4 tokens).
const deltaText = (i: number) => "abcdefghijklmnopqrstuvwxyz0123".slice(0, 1 + ((i * 7) % 29))

const makeTurn = (n: number): ReadonlyArray<StreamEvent.StreamEvent> => {
  const runId = Ids.generateEventId()
  const at = (payload: StreamEvent.Payload) => Events.envelope({ runId }, payload, Ids.generateEventId(), 0)
  const itemId = `item_${n}`
  let content = ""
  const deltas: Array<StreamEvent.StreamEvent> = []
  for (let i = 0; i < DELTAS; i++) {
    const text = deltaText(i + n)
    content += text
    deltas.push(at({ type: "item_delta", item_id: itemId, delta_content: text }))
  }
  return [
    at({
      type: "response_start",
      response_id: runId,
      turn_id: Ids.generateEventId(),
      thread_id: Ids.generateEventId(),
      model_id: "bench",
      provider_id: "bench",
      created_at: 0
    }),
    at({ type: "item_start", item_id: itemId, item_type: "message" }),
    ...deltas,
    at({ type: "item_done", item_id: itemId, final_item: { type: "message", id: itemId, content, origin: "agent" } }),
    at({ type: "response_done", response_id: runId, status: "complete", finish_reason: "stop" })
  ]
}

/** The floor: one loop that concatenates every delta of every turn. */
const concatenate = (turns: ReadonlyArray<ReadonlyArray<StreamEvent.StreamEvent>>): number => {
  let events = 0
  for (const turn of turns) {
    let content = ""
    for (const event of turn) {
      if (event.payload.type === "item_delta") content += event.payload.delta_content
      events++
    }
    if (content.length === 0) throw new Error("empty turn")
  }
  return events
}

/** Every turn through the stage, all turns at once; returns the payload count. */
const throughStage = (turns: ReadonlyArray<ReadonlyArray<StreamEvent.StreamEvent>>): Promise<number> =>
  Effect.runPromise(
    Effect.forEach(turns, (turn) => Stream.runCount(Stream.fromIterable(turn).pipe(UpsertStream.upserts())), {
      concurrency: "unbounded"
    }).pipe(Effect.map((counts) => counts.reduce((a, b) => a + b, 0)))
  )

/** Every turn through the Promise facade, all turns at once; returns the message count. */
const throughFacade = async (turns: ReadonlyArray<ReadonlyArray<StreamEvent.StreamEvent>>): Promise<number> => {
  let messages = 0
  await Promise.all(turns.map(async (turn) => {
    const first = turn[0]!.payload
    if (first.type !== "response_start") throw new Error("turn without response_start")
    const processor = new UpsertStreamProcessor({
      turnId: first.turn_id,
      threadId: first.thread_id,
      onEmit: async () => {
        messages++
      }
    })
    for (const event of turn) await processor.processEvent(event)
    await processor.destroy()
  }))
  return messages
}

/** Runs the upsert-stage benchmark and returns its report. */
export const run = async (): Promise<string> => {
  const turns = Array.from({ length: TURNS }, (_, n) => makeTurn(n))
  const events = turns.reduce((sum, turn) => sum + turn.length, 0)
  const bytes = turns.reduce(
    (sum, turn) =>
      sum + turn.reduce((s, e) => s + (e.payload.type === "item_delta" ? e.payload.delta_content.length : 0), 0),
    0
  )
  const payloads = await throughStage(turns)
  const upserts = payloads - 2 * TURNS // minus turn_started and turn_completed
  const floor = await measure("concatenate deltas (floor)", bytes, () => concatenate(turns), { warmup: 3, rounds: 7 })
  const stage = await measure("UpsertStream.upserts", bytes, async () => {
    await throughStage(turns)
    return events
  }, { warmup: 1, rounds: 5 })
  const facade = await measure("UpsertStreamProcessor", bytes, async () => {
    await throughFacade(turns)
    return events
  }, { warmup: 1, rounds: 3 })
  return [
    report(`Upsert stage, ${TURNS} concurrent turns of ${DELTAS} deltas (${events.toLocaleString("en-US")} events)`, [
      floor,
      stage,
      facade
    ], floor),
    "",
    `Upserts: ${upserts.toLocaleString("en-US")} for ${(TURNS * DELTAS).toLocaleString("en-US")} deltas ` +
    `(${(upserts / TURNS).toFixed(1)} per item of ${DELTAS} deltas, ${
      (upserts / (TURNS * DELTAS) * 100).toFixed(2)
    }% of the deltas; ` +
    `default gradient, clock not reaching the 1000 ms timeout)`
  ].join("\n")
}
