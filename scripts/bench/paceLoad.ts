/**
 * Where the live-pace bench's turns come from (`pace.ts`): the provider stand-in in
 * its own process over loopback HTTP (`outside`, the default), or the bodies made in
 * the measured process by one timer (`inprocess`, `BENCH_PACE_LOAD=inprocess`).
 *
 * @internal
 */
import type { TurnSource } from "@sluice/pipeline"

/** When each content chunk of a level's turns was sent, and how the load went. */
export interface Sent {
  /** `turns x chunks` times on `monoNow`'s clock, turn by turn; NaN for a chunk never sent. */
  readonly times: Float64Array
  /** When each was due (its turn's request + (k+1) x `PERIOD_MS`), in the same layout. */
  readonly due: Float64Array
  /** Requests the load answered (one a turn unless the client retried); undefined in process. */
  readonly requests: number | undefined
  /** Bodies closed by the client before their end. */
  readonly aborted: number
}

/** A load: each turn's source, what was sent once a level is over, the load's own process. */
export interface Load {
  readonly name: string
  /** The source of the turn `index` of a level of `count` turns. */
  readonly source: (index: number) => TurnSource.TurnSource<unknown, never>
  /** What was sent to the `count` turns of the level that just ended; forgets it. */
  readonly sent: (count: number) => Promise<Sent>
  /** The process the load runs in, when it is not this one (its CPU is read from /proc). */
  readonly pid: number | undefined
  readonly close: () => Promise<void>
}
