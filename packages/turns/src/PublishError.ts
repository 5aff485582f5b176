/**
 * The typed failure of the turn publisher.
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"

/**
 * Why publishing stopped:
 *
 * - `RetriesExhausted`: Redis stayed unavailable through every retry of the policy.
 * - `Conflict`: the stream already holds a different entry under an id this turn
 *   writes (the turn was published before, by someone else or with other content).
 * - `Rejected`: Redis refused a write (a key of another type, a bad argument).
 * - `InvalidInput`: the turn id is not a UUID, a message belongs to another turn, or
 *   an event does not satisfy its schema.
 * - `Ended`: the turn was ended by another writer (a server that found the producer's
 *   lease lapsed, `TurnEnding`): the stream's last entry is there, at a sealed id, and
 *   Redis refuses every later write. The producer stops (docs/redis.md#leases-and-endings).
 *
 * @since 0.3.0
 * @category schemas
 */
export const PublishErrorReason = Schema.Literals([
  "RetriesExhausted",
  "Conflict",
  "Rejected",
  "InvalidInput",
  "Ended"
])
  .annotate({
    identifier: "PublishErrorReason"
  })

/**
 * @since 0.3.0
 * @category models
 */
export type PublishErrorReason = typeof PublishErrorReason.Type

/**
 * Publishing a turn's stream failed. `written` counts the entries of this stream that
 * Redis confirmed (the publisher passed exactly those on); `entryId` is the id of the
 * first entry it could not confirm, when there is one; `attempts` how many times it
 * tried that write.
 *
 * @since 0.3.0
 * @category errors
 */
export class PublishError extends Schema.TaggedError<PublishError>()("PublishError", {
  reason: PublishErrorReason,
  turnId: Schema.String,
  key: Schema.String,
  written: Schema.Int,
  entryId: Schema.optionalKey(Schema.String),
  attempts: Schema.optionalKey(Schema.Int),
  detail: Schema.String,
  cause: Schema.optionalKey(Schema.Defect())
}) {
  /**
   * @since 0.1.0
   */
  override get message(): string {
    const at = this.entryId === undefined ? "" : ` at entry ${this.entryId}`
    return `publishing ${this.key} failed${at} after ${this.written} entries: ${this.reason}: ${this.detail}`
  }
}

/**
 * The publisher's options were invalid; `detail` names every bad field.
 *
 * @since 0.3.0
 * @category errors
 */
export class InvalidPublisherOptions extends Schema.TaggedError<InvalidPublisherOptions>()("InvalidPublisherOptions", {
  detail: Schema.String
}) {
  /**
   * @since 0.1.0
   */
  override get message(): string {
    return `invalid publisher options: ${this.detail}`
  }
}
