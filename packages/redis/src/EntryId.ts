/**
 * Redis Stream entry ids, `<ms>-<seq>`: two unsigned 64-bit integers, ordered by `ms`
 * then by `seq`. Parsing, ordering and the range bounds `XRANGE` accepts (`-`, `+`,
 * `(id` for an exclusive bound, `ms` alone for a whole millisecond).
 *
 * @since 0.1.0
 */
import * as Option from "effect/Option"
import * as Order from "effect/Order"

/**
 * A parsed entry id.
 *
 * @since 0.1.0
 * @category models
 */
export interface EntryId {
  readonly ms: bigint
  readonly seq: bigint
}

/**
 * The largest value of either part of an id.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxPart: bigint = 2n ** 64n - 1n

/**
 * `0-0`: smaller than every id `XADD` accepts. Reading after it reads a whole stream.
 *
 * @since 0.1.0
 * @category constants
 */
export const zero: EntryId = { ms: 0n, seq: 0n }

/**
 * The largest id.
 *
 * @since 0.1.0
 * @category constants
 */
export const max: EntryId = { ms: maxPart, seq: maxPart }

const partPattern = /^\d{1,20}$/

const parsePart = (text: string): Option.Option<bigint> => {
  if (!partPattern.test(text)) return Option.none()
  const value = BigInt(text)
  return value <= maxPart ? Option.some(value) : Option.none()
}

/**
 * Parses a complete id, `<ms>-<seq>`. Anything else (a bare `ms`, `*`, a sign, a
 * part above 2^64 - 1) is `None`.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parse = (text: string): Option.Option<EntryId> => {
  const dash = text.indexOf("-")
  if (dash < 0) return Option.none()
  return Option.flatMap(
    parsePart(text.slice(0, dash)),
    (ms) => Option.map(parsePart(text.slice(dash + 1)), (seq) => ({ ms, seq }))
  )
}

/**
 * Whether a string is a complete entry id.
 *
 * @since 0.1.0
 * @category guards
 */
export const isEntryId = (text: string): boolean => Option.isSome(parse(text))

/**
 * Formats an id as Redis writes it.
 *
 * @since 0.1.0
 * @category formatting
 */
export const format = (id: EntryId): string => `${id.ms}-${id.seq}`

/**
 * Orders ids as Redis does.
 *
 * @since 0.1.0
 * @category ordering
 */
export const order: Order.Order<EntryId> = (a, b) =>
  a.ms < b.ms ? -1 : a.ms > b.ms ? 1 : a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0

// Compares two decimal numbers without leading zeros, as text.
const compareDecimal = (a: string, b: string): number =>
  a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0

/**
 * Whether the id `a` comes after the id `b`, both as Redis writes them (`<ms>-<seq>`,
 * no leading zeros, as `format` gives): a comparison of the text, with no parsing, for
 * paths that compare an id per entry.
 *
 * @since 0.3.0
 * @category ordering
 */
export const isAfter = (a: string, b: string): boolean => {
  const dashA = a.indexOf("-")
  const dashB = b.indexOf("-")
  const ms = compareDecimal(a.slice(0, dashA), b.slice(0, dashB))
  return ms !== 0 ? ms > 0 : compareDecimal(a.slice(dashA + 1), b.slice(dashB + 1)) > 0
}

/**
 * The id that follows `id`, `None` after the largest id.
 *
 * @since 0.1.0
 * @category constructors
 */
export const next = (id: EntryId): Option.Option<EntryId> =>
  id.seq < maxPart
    ? Option.some({ ms: id.ms, seq: id.seq + 1n })
    : id.ms < maxPart
    ? Option.some({ ms: id.ms + 1n, seq: 0n })
    : Option.none()

/**
 * The id that precedes `id`, `None` before `0-0`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const previous = (id: EntryId): Option.Option<EntryId> =>
  id.seq > 0n
    ? Option.some({ ms: id.ms, seq: id.seq - 1n })
    : id.ms > 0n
    ? Option.some({ ms: id.ms - 1n, seq: maxPart })
    : Option.none()

/**
 * Parses one bound of an `XRANGE`: `-`, `+`, `<ms>-<seq>`, `<ms>` (the first or last id
 * of that millisecond, by `side`), each but `-` and `+` optionally prefixed by `(` for
 * an exclusive bound. Returns the smallest (`start`) or largest (`end`) id the range
 * includes, `None` when the text is not a bound or the exclusive bound leaves nothing.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseBound = (text: string, side: "start" | "end"): Option.Option<Option.Option<EntryId>> => {
  if (text === "-") return Option.some(Option.some(zero))
  if (text === "+") return Option.some(Option.some(max))
  const exclusive = text.startsWith("(")
  const body = exclusive ? text.slice(1) : text
  const id = body.includes("-")
    ? parse(body)
    : Option.map(parsePart(body), (ms) => ({ ms, seq: side === "start" ? 0n : maxPart }))
  if (Option.isNone(id)) return Option.none()
  if (!exclusive) return Option.some(id)
  return Option.some(side === "start" ? next(id.value) : previous(id.value))
}
