/**
 * One entry of a Redis Stream: its id and its field-value pairs, in the order they
 * were written.
 *
 * @since 0.1.0
 */
import * as Option from "effect/Option"

/**
 * Field-value pairs, in order.
 *
 * @since 0.1.0
 * @category models
 */
export type Fields = ReadonlyArray<readonly [field: string, value: string]>

/**
 * An entry as `XRANGE` and `XREAD` return it.
 *
 * @since 0.1.0
 * @category models
 */
export interface StreamEntry {
  readonly id: string
  readonly fields: Fields
}

/**
 * The value of the first field with the given name.
 *
 * @since 0.1.0
 * @category accessors
 */
export const field = (entry: StreamEntry, name: string): Option.Option<string> => {
  for (const [key, value] of entry.fields) {
    if (key === name) return Option.some(value)
  }
  return Option.none()
}

/**
 * Fields from the flat `[field, value, field, value, ...]` list Redis replies with. An
 * odd trailing element (never sent by Redis) is dropped.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fieldsFromFlat = (flat: ReadonlyArray<string>): Fields => {
  const fields: Array<readonly [string, string]> = []
  for (let i = 0; i + 1 < flat.length; i += 2) {
    fields.push([flat[i]!, flat[i + 1]!])
  }
  return fields
}

/**
 * The flat `[field, value, ...]` list `XADD` takes.
 *
 * @since 0.1.0
 * @category conversions
 */
export const fieldsToFlat = (fields: Fields): Array<string> => {
  const flat: Array<string> = []
  for (const [key, value] of fields) flat.push(key, value)
  return flat
}

/**
 * Whether two field lists are the same pairs in the same order.
 *
 * @since 0.1.0
 * @category equivalence
 */
export const sameFields = (a: Fields, b: Fields): boolean =>
  a.length === b.length && a.every(([key, value], i) => b[i]![0] === key && b[i]![1] === value)
