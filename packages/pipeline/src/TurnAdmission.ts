/**
 * Which turns a pipeline takes on. A process past what it can serve does not slow
 * down one turn: it delays every chunk of every turn, and its timers fire late
 * (BENCHMARKS.md). So a pipeline may be given limits, and a turn asked for past one of
 * them is refused at once with `AtCapacity`, before anything of it is written, which a
 * server answers 503 with `Retry-After` (another process, or the same one later, can
 * take it):
 *
 * - `maxTurns`: the turns running at once;
 * - `maxLagMs`: how late the process runs. One fiber sleeps 100 ms at a time on
 *   Effect's `Clock`; the lag is how late its last wake came, or how overdue its next
 *   one is, whichever is more. A loop that is busy with I/O runs its timers late, so
 *   this is what every turn's chunks wait for, whatever the count or the pace of the
 *   turns.
 *
 * A pipeline that is shutting down (`TurnPipeline.shutdown`, or its scope closing)
 * refuses every new turn the same way, naming `shuttingDown` (no option sets it).
 *
 * A refusal is not a turn: it has no entries, no lease and no metrics of a turn but
 * `sluice_turns_refused_total`. An application that would rather wait for a place
 * than be refused bounds its own calls (a `Semaphore` around `run`). A server asks
 * the pipeline's `load` whether it takes turns now, to say so to its load balancer
 * (`sluice serve`'s `/readyz`).
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"

/**
 * The limits a pipeline may have, and `shuttingDown`: the pipeline takes no more turns
 * (its `value` and `measured` are then the turns still running).
 *
 * @since 0.3.0
 * @category schemas
 */
export const Limit = Schema.Literals(["maxTurns", "maxLagMs", "shuttingDown"]).annotate({
  identifier: "AdmissionLimit"
})

/**
 * @since 0.3.0
 * @category models
 */
export type Limit = typeof Limit.Type

/**
 * A limit met: `limit` is which, `value` its value, and `measured` what the pipeline
 * measured against it (the turns running, or how many milliseconds late the process
 * runs).
 *
 * @since 0.3.0
 * @category models
 */
export interface LimitMet {
  readonly limit: Limit
  readonly value: number
  readonly measured: number
}

/**
 * A limit met, in words: `this process already runs 1000 turns, its limit (maxTurns
 * 1000)`.
 *
 * @since 0.3.0
 * @category formatting
 */
export const describe = (met: LimitMet): string =>
  met.limit === "maxTurns"
    ? `this process already runs ${met.measured} turns, its limit (maxTurns ${met.value})`
    : met.limit === "maxLagMs"
    ? `this process runs ${met.measured} ms late, past its limit (maxLagMs ${met.value})`
    : `this process is shutting down (${met.measured} turns still running)`

/**
 * A pipeline's load now: the turns it runs, how late the process runs (`undefined`
 * without `maxLagMs`, which alone runs the probe that measures it), and the limit a
 * turn asked for now would meet (`undefined`: it would be taken).
 *
 * @since 0.3.0
 * @category models
 */
export interface Load {
  readonly turns: number
  readonly lagMs: number | undefined
  readonly full: LimitMet | undefined
}

/**
 * A turn refused: `limit` is the limit it met, `value` that limit's value, and
 * `measured` what the pipeline measured against it (see `LimitMet`).
 *
 * @since 0.3.0
 * @category errors
 */
export class AtCapacity extends Schema.TaggedError<AtCapacity>()("AtCapacity", {
  turnId: Schema.String,
  limit: Limit,
  value: Schema.Number,
  measured: Schema.Number
}) {
  override get message(): string {
    return `turn ${this.turnId} refused: ${describe(this)}; try again later or on another process`
  }
}

/**
 * A limit that is not a positive integer.
 *
 * @since 0.3.0
 * @category errors
 */
export class InvalidLimit extends Schema.TaggedError<InvalidLimit>()("InvalidLimit", {
  limit: Limit,
  value: Schema.Number
}) {
  override get message(): string {
    return `${this.limit} must be a positive integer, got ${this.value}`
  }
}
