/**
 * Reads of a stream bounded by bytes as well as by entries. Redis's `XRANGE` and
 * `XREAD` only take a `COUNT`, so a reader that pages through a stream sizes each
 * page's count from the largest entry it has seen: `maxBytes / largest`, between 1
 * and `maxCount`. The first page of a read is small (`firstCount`), so a stream of
 * huge entries is never read a thousand at a time.
 *
 * @since 0.1.0
 */
import type { StreamEntry } from "./StreamEntry.js"

/**
 * The budget of one page: at most `maxCount` entries and, once entry sizes are known,
 * about `maxBytes` bytes (one entry larger than the budget is still read, alone).
 *
 * @since 0.1.0
 * @category models
 */
export interface ReadBudget {
  readonly maxCount: number
  readonly maxBytes: number
}

/**
 * The count of a read before any entry size is known.
 *
 * @since 0.1.0
 * @category constants
 */
export const firstCount = 16

/**
 * The default byte budget of one page: 4 MiB.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxBytes = 4 * 1024 * 1024

/**
 * The size of an entry as Redis sends it, near enough: its id and every field name and
 * value, in UTF-16 code units (a character of JSON text is at least a byte).
 *
 * @since 0.1.0
 * @category accessors
 */
export const entryBytes = (entry: StreamEntry): number => {
  let bytes = entry.id.length
  for (const [name, value] of entry.fields) bytes += name.length + value.length
  return bytes
}

/**
 * A page sizer: `count()` is the count of the next read, `seen(entries)` records a
 * page's entries.
 *
 * @since 0.1.0
 * @category models
 */
export interface Pager {
  readonly count: () => number
  readonly seen: (entries: ReadonlyArray<StreamEntry>) => void
}

/**
 * A fresh page sizer for one read of a stream.
 *
 * @since 0.1.0
 * @category constructors
 */
export const pager = (budget: ReadBudget): Pager => {
  const maxCount = Math.max(1, Math.floor(budget.maxCount))
  const maxBytes = Math.max(1, budget.maxBytes)
  let largest = 0
  return {
    count: () =>
      largest === 0 ? Math.min(maxCount, firstCount) : Math.max(1, Math.min(maxCount, Math.floor(maxBytes / largest))),
    seen: (entries) => {
      for (const entry of entries) largest = Math.max(largest, entryBytes(entry))
    }
  }
}
