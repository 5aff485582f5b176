/**
 * The errors of a thread's operations (docs/threads.md#errors), each naming what was
 * wrong.
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"

/**
 * No thread has this id (never created, deleted, or its retention ran out).
 *
 * @since 0.3.0
 * @category errors
 */
export class ThreadNotFound extends Schema.TaggedError<ThreadNotFound>()("ThreadNotFound", {
  threadId: Schema.String
}) {
  /**
   * @since 0.3.0
   */
  override get message(): string {
    return `no thread ${this.threadId}`
  }
}

/**
 * A thread with this id exists already.
 *
 * @since 0.3.0
 * @category errors
 */
export class ThreadExists extends Schema.TaggedError<ThreadExists>()("ThreadExists", {
  threadId: Schema.String
}) {
  /**
   * @since 0.3.0
   */
  override get message(): string {
    return `thread ${this.threadId} exists already`
  }
}

/**
 * The thread was deleted: its id is not created again while its tombstone lasts
 * (`Threads`' `tombstoneMs`), so thread tokens minted for it reach no new thread.
 *
 * @since 0.3.0
 * @category errors
 */
export class ThreadDeleted extends Schema.TaggedError<ThreadDeleted>()("ThreadDeleted", {
  threadId: Schema.String
}) {
  /**
   * @since 0.3.0
   */
  override get message(): string {
    return `thread ${this.threadId} was deleted`
  }
}

/**
 * The thread has no turn of this id.
 *
 * @since 0.3.0
 * @category errors
 */
export class ThreadTurnNotFound extends Schema.TaggedError<ThreadTurnNotFound>()("ThreadTurnNotFound", {
  threadId: Schema.String,
  turnId: Schema.String
}) {
  /**
   * @since 0.3.0
   */
  override get message(): string {
    return `thread ${this.threadId} has no turn ${this.turnId}`
  }
}

/**
 * A turn of the thread is running: a thread runs one turn at a time. `turnId` is the
 * running turn's.
 *
 * @since 0.3.0
 * @category errors
 */
export class TurnRunning extends Schema.TaggedError<TurnRunning>()("TurnRunning", {
  threadId: Schema.String,
  turnId: Schema.String
}) {
  /**
   * @since 0.3.0
   */
  override get message(): string {
    return `thread ${this.threadId} is running turn ${this.turnId}`
  }
}

/**
 * The turn to end is not the thread's running turn (it ended already, or another one
 * runs).
 *
 * @since 0.3.0
 * @category errors
 */
export class TurnNotRunning extends Schema.TaggedError<TurnNotRunning>()("TurnNotRunning", {
  threadId: Schema.String,
  turnId: Schema.String
}) {
  /**
   * @since 0.3.0
   */
  override get message(): string {
    return `turn ${this.turnId} of thread ${this.threadId} is not running`
  }
}

/**
 * A thread id, a turn's input or the thread's size that is not valid: `field` names
 * it, `reason` says why in a sentence.
 *
 * @since 0.3.0
 * @category errors
 */
export class InvalidThreadInput extends Schema.TaggedError<InvalidThreadInput>()("InvalidThreadInput", {
  threadId: Schema.String,
  field: Schema.String,
  reason: Schema.String
}) {
  /**
   * @since 0.3.0
   */
  override get message(): string {
    return `invalid input for thread ${this.threadId}: ${this.field}: ${this.reason}`
  }
}

/**
 * The thread's log changed under each attempt to write it (many writers at once); the
 * operation may be tried again.
 *
 * @since 0.3.0
 * @category errors
 */
export class ThreadContended extends Schema.TaggedError<ThreadContended>()("ThreadContended", {
  threadId: Schema.String,
  attempts: Schema.Number
}) {
  /**
   * @since 0.3.0
   */
  override get message(): string {
    return `thread ${this.threadId} changed under ${this.attempts} attempts to write it`
  }
}

/**
 * Options of the `Threads` service that are not valid.
 *
 * @since 0.3.0
 * @category errors
 */
export class InvalidThreadsOptions extends Schema.TaggedError<InvalidThreadsOptions>()("InvalidThreadsOptions", {
  detail: Schema.String
}) {
  /**
   * @since 0.3.0
   */
  override get message(): string {
    return `invalid threads options: ${this.detail}`
  }
}

/**
 * Any error of a thread's operations but Redis's own.
 *
 * @since 0.3.0
 * @category models
 */
export type ThreadError =
  | ThreadNotFound
  | ThreadExists
  | ThreadDeleted
  | ThreadTurnNotFound
  | TurnRunning
  | TurnNotRunning
  | InvalidThreadInput
  | ThreadContended
