/**
 * What the pipeline counts of a turn's events for the operator: the event and turn
 * counters.
 *
 * @internal
 */
import type { StreamEvent } from "@sluice/core"
import { TurnMetrics } from "@sluice/turns"
import * as Effect from "effect/Effect"

/**
 * Counts events written to Stream A by type, and the turn as ended by the status of
 * its `response_done`: one step per chunk, whatever its events (under the attributes
 * of `Metric.CurrentMetricAttributes` and the registry in context).
 *
 * @internal
 */
export const countEvents = (chunk: ReadonlyArray<StreamEvent.StreamEvent>): Effect.Effect<void> =>
  Effect.contextWith((context) => {
    // one update per run of events of one type (a chunk is mostly deltas)
    let type = chunk[0]?.type
    let run = 0
    for (const event of chunk) {
      if (event.type !== type) {
        TurnMetrics.events(type!).updateUnsafe(run, context)
        type = event.type
        run = 0
      }
      run++
      if (event.payload.type === "response_done") {
        TurnMetrics.turnsEnded(event.payload.status).updateUnsafe(1, context)
      }
    }
    if (type !== undefined) TurnMetrics.events(type).updateUnsafe(run, context)
    return Effect.void
  })
