/**
 * Schemas of the replies the live layer reads, and the mapping of client failures
 * to `RedisError`.
 *
 * @internal
 */
import * as Schema from "effect/Schema"
import { decodeReply, fromCause, RedisError } from "../RedisError.js"
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

/** @internal */
export const toRedisError = fromCause

/** @internal */
export { decodeReply }

/**
 * The error for a reply of the wrong kind, for the hot paths that check a reply by
 * hand instead of decoding it.
 *
 * @internal
 */
export const unexpectedReply = (command: string, key: string, reply: unknown): RedisError =>
  new RedisError({ reason: "Rejected", command, key, detail: `unexpected reply: ${typeof reply}` })
