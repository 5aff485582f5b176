/**
 * How many turns one pipeline runs at once. A process past what it can serve does
 * not slow down one turn: it delays every chunk of every turn, and the timers that
 * keep turns alive fire late (BENCHMARKS.md). So a pipeline may be given a limit
 * (`maxTurns`): a turn asked for while that many run is refused at once, before
 * anything of it is written, with `AtCapacity`, which a server answers 503 with
 * `Retry-After` (another process, or the same one later, can take it).
 *
 * A refusal is not a turn: it has no entries, no lease and no metrics of a turn but
 * `sluice_turns_refused_total`. An application that would rather wait for a place
 * than be refused bounds its own calls (a `Semaphore` around `run`).
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"

/**
 * A turn refused because the pipeline already runs `maxTurns` turns.
 *
 * @since 0.3.0
 * @category errors
 */
export class AtCapacity extends Schema.TaggedError<AtCapacity>()("AtCapacity", {
  turnId: Schema.String,
  maxTurns: Schema.Number
}) {
  override get message(): string {
    return `turn ${this.turnId} refused: this process already runs ${this.maxTurns} turns, its limit (maxTurns); ` +
      "try again later or on another process"
  }
}

/**
 * A `maxTurns` that is not a positive integer.
 *
 * @since 0.3.0
 * @category errors
 */
export class InvalidMaxTurns extends Schema.TaggedError<InvalidMaxTurns>()("InvalidMaxTurns", {
  maxTurns: Schema.Number
}) {
  override get message(): string {
    return `maxTurns must be a positive integer, got ${this.maxTurns}`
  }
}
