/**
 * The typed failure of a Redis command.
 *
 * @since 0.1.0
 */
import { SchemaDecode } from "@sluice/core"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/**
 * Why a command failed:
 *
 * - `IdTooSmall`: `XADD` was given an id equal to or smaller than the stream's top
 *   item (or `0-0`). For a retried write with an explicit id this is how Redis says
 *   the entry may already be there.
 * - `Unavailable`: no reply, because the connection failed, closed or timed out, or
 *   because the server was loading, busy or failing over. The command may or may not
 *   have run; retrying may help.
 * - `Rejected`: the server refused the command (a wrong type, a malformed id, a bad
 *   argument). Retrying the same command will not help.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RedisErrorReason = Schema.Literals(["IdTooSmall", "Unavailable", "Rejected"]).annotate({
  identifier: "RedisErrorReason"
})

/**
 * @since 0.1.0
 * @category models
 */
export type RedisErrorReason = typeof RedisErrorReason.Type

/**
 * A Redis command failed. `command` names it (`XADD`, `XRANGE`, ...), `key` the key it
 * addressed, `cause` the client's own error.
 *
 * @since 0.1.0
 * @category errors
 */
export class RedisError extends Schema.TaggedError<RedisError>()("RedisError", {
  reason: RedisErrorReason,
  command: Schema.String,
  key: Schema.optionalKey(Schema.String),
  detail: Schema.String,
  cause: Schema.optionalKey(Schema.Defect())
}) {
  /**
   * @since 0.1.0
   */
  override get message(): string {
    const where = this.key === undefined ? this.command : `${this.command} ${this.key}`
    return `${where}: ${this.reason}: ${this.detail}`
  }
}

/**
 * Whether a failure is a `RedisError` that a retry may cure (`Unavailable`).
 *
 * @since 0.1.0
 * @category guards
 */
export const isRetryable = (error: unknown): boolean => error instanceof RedisError && error.reason === "Unavailable"

const idTooSmallPattern = /equal or smaller than the target stream top item|must be greater than 0-0/i
const transientPattern = /^(LOADING|BUSY|TRYAGAIN|MASTERDOWN|CLUSTERDOWN|READONLY)\b/

/**
 * Classifies the text of a server error reply.
 *
 * @since 0.1.0
 * @category constructors
 */
export const reasonOfReply = (reply: string): RedisErrorReason =>
  idTooSmallPattern.test(reply) ? "IdTooSmall" : transientPattern.test(reply) ? "Unavailable" : "Rejected"

/**
 * The `RedisError` for what a client call threw: a server error reply is classified
 * by its text, anything else (a closed connection, a timeout) is `Unavailable`.
 *
 * @since 0.3.0
 * @category constructors
 */
export const fromCause = (command: string, key: string | undefined, cause: unknown): RedisError => {
  const detail = cause instanceof Error ? cause.message : String(cause)
  const reason = cause instanceof Error && cause.name === "ReplyError" ? reasonOfReply(detail) : "Unavailable"
  return key === undefined
    ? new RedisError({ reason, command, detail, cause })
    : new RedisError({ reason, command, key, detail, cause })
}

/**
 * Decodes a reply by a schema, failing with a `Rejected` error that names the command
 * and key when the reply has an unexpected shape.
 *
 * @since 0.3.0
 * @category decoding
 */
export const decodeReply = <A, I>(schema: Schema.Codec<A, I>) => {
  const decode = SchemaDecode.decodeUnknown(schema)
  return (command: string, key: string) => (reply: unknown): Effect.Effect<A, RedisError> =>
    Effect.mapError(decode(reply), (error) =>
      new RedisError({
        reason: "Rejected",
        command,
        key,
        detail: `unexpected reply: ${error.message}`
      }))
}
