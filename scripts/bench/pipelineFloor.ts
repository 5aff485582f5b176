/**
 * The floor of the pipeline load: what a plain loop with no stage, no Effect and no
 * checks costs to put the same entries into Redis. Every turn's events are made
 * before the clock starts; then, 32 events of each turn at a time (round robin over
 * the turns), each event is turned into its JSON and its five Stream A fields, the
 * batch into one XADD pipeline's bytes, and the bytes are written to one socket; the
 * replies are counted as they come back. No upserts, no retries, no ids checked.
 */
import { Ids, StreamEvent as Events } from "@sluice/core"
import type { StreamEvent } from "@sluice/core"
import { connect } from "node:net"
import { performance } from "node:perf_hooks"
import { RespWriter } from "../../packages/redis/src/internal/resp.js"

/** What the floor run measured. */
export interface FloorResult {
  readonly entries: number
  readonly seconds: number
  readonly nodeCpu: number
  readonly replies: number
}

const turnEvents = (deltas: number, text: (i: number) => string): Array<StreamEvent.StreamEvent> => {
  const runId = Ids.generateEventId()
  const events: Array<StreamEvent.StreamEvent> = []
  for (let i = 0; i < deltas; i++) {
    events.push(
      Events.envelope(
        { runId },
        { type: "item_delta", item_id: "item_0", delta_content: text(i) },
        Ids.generateEventId(),
        Date.now()
      )
    )
  }
  return events
}

/** Runs the floor loop against the Redis at `host:port`. */
export const run = async (
  host: string,
  port: number,
  turns: number,
  deltas: number,
  text: (i: number) => string
): Promise<FloorResult> => {
  const all = Array.from({ length: turns }, () => ({ turnId: Ids.generateEventId(), events: turnEvents(deltas, text) }))
  const socket = connect({ host, port })
  socket.setNoDelay(true)
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject))
  const entries = turns * deltas
  let replies = 0
  let done: () => void = () => {}
  const finished = new Promise<void>((resolve) => (done = resolve))
  // each XADD reply is `$<n>\r\n<id>\r\n` or an error line `-...\r\n`
  let atLineStart = true
  let bodyNext = false
  socket.on("data", (data: Buffer) => {
    for (let i = 0; i < data.length; i++) {
      const byte = data[i]!
      if (atLineStart) {
        if (bodyNext) bodyNext = false
        else if (byte === 36) {
          replies++
          bodyNext = true
        } else if (byte === 45) replies++
      }
      atLineStart = byte === 10
    }
    if (replies >= entries) done()
  })
  const out = new RespWriter()
  const cpuBefore = process.cpuUsage()
  const start = performance.now()
  for (let from = 0; from < deltas; from += 32) {
    for (const turn of all) {
      const batch = turn.events.slice(from, from + 32).map((event, i) => ({
        id: `0-${from + i + 1}`,
        fields: [
          ["eventId", event.event_id],
          ["timestamp", String(event.timestamp)],
          ["turnId", turn.turnId],
          ["payloadType", event.type],
          ["payload", JSON.stringify(event)]
        ] as const
      }))
      out.xadds(`floor:turn:{${turn.turnId}}:events`, batch, 10000)
      if (!socket.write(out.take())) {
        await new Promise<void>((resolve) => socket.once("drain", resolve))
      }
    }
  }
  await finished
  const seconds = (performance.now() - start) / 1000
  const cpu = process.cpuUsage(cpuBefore)
  socket.destroy()
  return { entries, seconds, nodeCpu: (cpu.user + cpu.system) / 1e6, replies }
}
