/**
 * The live-pace bench's in-process load (`BENCH_PACE_LOAD=inprocess`): each turn's
 * OpenAI Chat Completions SSE body made in the measured process. One timer for all
 * turns (as one poll of the event loop hands every socket its data) looks every
 * `TICK_MS` for the chunks that are due and pushes each into its turn's stream, the
 * way a socket's `data` callback feeds a response body; the body then goes through
 * `TurnSource.sse`. No HTTP client in the path, and the timer's work is counted as
 * the measured process's. A chunk is "sent" when it is due (its turn's start + (k+1)
 * x `PERIOD_MS`), so a pipeline that falls behind shows its backlog in the delay.
 *
 * @internal
 */
import { TurnSource } from "@sluice/pipeline"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import type { Load, Sent } from "./paceLoad.js"
import { contentEvent, endEvents, monoNow, PERIOD_MS, roleEvent } from "./paceShared.js"

const TICK_MS = 2
const encoder = new TextEncoder()

interface Delivery {
  readonly deliver: (now: number) => void
}

/** One timer delivering every open body's due chunks. */
class Network {
  private readonly open = new Set<Delivery>()
  private timer: ReturnType<typeof setInterval> | undefined
  add(delivery: Delivery) {
    this.open.add(delivery)
    this.timer ??= setInterval(() => this.tick(), TICK_MS)
  }
  remove(delivery: Delivery) {
    this.open.delete(delivery)
    if (this.open.size === 0 && this.timer !== undefined) {
      clearInterval(this.timer)
      this.timer = undefined
    }
  }
  private tick() {
    const now = monoNow()
    for (const delivery of this.open) delivery.deliver(now)
  }
}

/** The in-process load of `chunks` content chunks a turn. */
export const make = (chunks: number): Load => {
  const network = new Network()
  let starts = new Map<number, number>()
  const body = (index: number): Stream.Stream<Uint8Array> =>
    Stream.callback<Uint8Array>((queue) =>
      Effect.acquireRelease(
        Effect.sync(() => {
          const start = monoNow()
          starts.set(index, start)
          let next = 0
          Queue.offerUnsafe(queue, encoder.encode(roleEvent()))
          const delivery: Delivery = {
            deliver: (now) => {
              while (next < chunks && start + (next + 1) * PERIOD_MS <= now) {
                Queue.offerUnsafe(queue, encoder.encode(contentEvent(index, next)))
                next++
              }
              if (next < chunks) return
              Queue.offerUnsafe(queue, encoder.encode(endEvents(chunks)))
              Queue.endUnsafe(queue)
              network.remove(delivery)
            }
          }
          network.add(delivery)
          return delivery
        }),
        (delivery) => Effect.sync(() => network.remove(delivery))
      )
    )
  return {
    name: "in process (bodies made by one timer in the measured process, no HTTP)",
    source: (index) => TurnSource.sse("openai-chat", body(index)),
    sent: (count) => {
      const times = new Float64Array(count * chunks).fill(NaN)
      for (const [index, start] of starts) {
        if (index >= count) continue
        for (let k = 0; k < chunks; k++) times[index * chunks + k] = start + (k + 1) * PERIOD_MS
      }
      starts = new Map()
      const sent: Sent = { times, due: times, requests: undefined, aborted: 0 }
      return Promise.resolve(sent)
    },
    pid: undefined,
    close: () => Promise.resolve()
  }
}
