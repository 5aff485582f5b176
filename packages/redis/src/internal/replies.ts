/**
 * Schemas of the replies the live layer reads, and the mapping of client failures
 * to `RedisError`.
 *
 * @internal
 */
import { SchemaDecode } from "@sluice/core"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { reasonOfReply, RedisError } from "../RedisError.js"
import type { StreamEntry } from "../StreamEntry.js"
import { fieldsFromFlat } from "../StreamEntry.js"

/** @internal */
export const EntryReply = Schema.Tuple([Schema.String, Schema.Array(Schema.String)])

/** @internal */
export const RangeReply = Schema.Array(EntryReply)

/** @internal */
export const ReadReply = Schema.NullOr(Schema.Array(Schema.Tuple([Schema.String, RangeReply])))

/** @internal */
export const IntegerReply = Schema.Number

/** @internal */
export const StringReply = Schema.String

/** @internal */
export const FlatReply = Schema.Array(Schema.String)

/** @internal */
export const toEntry = ([id, flat]: typeof EntryReply.Type): StreamEntry => ({ id, fields: fieldsFromFlat(flat) })

/**
 * The `RedisError` for what a client call threw: a server error reply is classified
 * by its text, anything else (a closed connection, a timeout) is `Unavailable`.
 *
 * @internal
 */
export const toRedisError = (command: string, key: string | undefined, cause: unknown): RedisError => {
  const detail = cause instanceof Error ? cause.message : String(cause)
  const reason = cause instanceof Error && cause.name === "ReplyError" ? reasonOfReply(detail) : "Unavailable"
  return key === undefined
    ? new RedisError({ reason, command, detail, cause })
    : new RedisError({ reason, command, key, detail, cause })
}

/**
 * Decodes a reply, failing with a `Rejected` error that names the command when the
 * reply has an unexpected shape.
 *
 * @internal
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

/**
 * The error for a reply of the wrong kind, for the hot paths that check a reply by
 * hand instead of decoding it.
 *
 * @internal
 */
export const unexpectedReply = (command: string, key: string, reply: unknown): RedisError =>
  new RedisError({ reason: "Rejected", command, key, detail: `unexpected reply: ${typeof reply}` })
