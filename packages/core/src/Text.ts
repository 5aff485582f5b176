/**
 * Text grown delta by delta, kept compact in memory.
 *
 * @since 0.1.0
 */

/**
 * The same text, compacted: a string built by `+` or a template from many pieces is
 * held by the engine as a tree of them (a UUID from `crypto.randomUUID`, built from
 * its 16 bytes, takes about 490 bytes so, against 70 as one flat string) until
 * something reads it whole. Reading its first character makes the engine copy it into
 * one flat string in place and free the pieces. For a string that is kept a while
 * (an event's id, a pipeline waiting for its socket write).
 *
 * @example
 * ```ts
 * import { Text } from "@sluice/core"
 * import { randomUUID } from "node:crypto"
 *
 * // the same 36 characters, held as one string
 * export const id = Text.compact(randomUUID())
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const compact = (text: string): string => {
  text.charCodeAt(0)
  return text
}

// Below this length a text is compacted every this many characters.
const smallBlock = 1024

/**
 * `text + delta`, compacted now and then. A string built by many `+` is held by the
 * engine as a tree with a node per piece (about 64 bytes for a delta of a few
 * characters: eight times the text for a typical message), until something reads it
 * whole. `append` reads the result's first character each time its length crosses a
 * block boundary, which makes the engine copy the tree into one flat string and free
 * the pieces; a block is 1 KiB up to 4 KiB of text, then a quarter of the text, so each
 * character is copied about four times over the text's life while the pieces not yet
 * compacted stay within one block.
 *
 * @example
 * ```ts
 * import { Text } from "@sluice/core"
 *
 * // "Hello!"
 * export const content = ["Hel", "lo", "!"].reduce(Text.append, "")
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const append = (text: string, delta: string): string => {
  const next = text + delta
  const before = text.length
  const block = before < 4 * smallBlock ? smallBlock : 1 << (31 - Math.clz32(before >>> 2))
  return Math.floor(next.length / block) !== Math.floor(before / block) ? compact(next) : next
}
