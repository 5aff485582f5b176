/**
 * What both durable store layers share about forks: the order of entry ids, the first
 * entry number of a fork, and reading through a chain of forks.
 *
 * @internal
 */
import * as EntryId from "@sluice/redis/EntryId"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { DurableEntry, ForkPoint } from "../DurableStore.js"

const parsed = (id: string): EntryId.EntryId => Option.getOrElse(EntryId.parse(id), () => EntryId.zero)

/**
 * Whether the entry id `a` comes after `b`.
 *
 * @internal
 */
export const isAfter = (a: string, b: string): boolean => EntryId.order(parsed(a), parsed(b)) > 0

/**
 * The number a fork's own entries count on from: the sequence part of its fork point
 * (a store's ids are `0-<n>`), so that the fork's first entry follows the point.
 *
 * @internal
 */
export const startOf = (at: string): number => Number(parsed(at).seq)

/**
 * The most levels a walk up a chain of forks takes (chains are never circular; this
 * only bounds the walk).
 *
 * @internal
 */
export const maxChain = 10_000

/**
 * The read of a store layer that `readThrough` builds on: a stream's own entries after
 * an id, with its fork point when it is a fork.
 *
 * @internal
 */
export type ReadOwn<E> = (
  name: string,
  after: string,
  count: number
) => Effect.Effect<{ readonly forkOf: Option.Option<ForkPoint>; readonly entries: ReadonlyArray<DurableEntry> }, E>

/**
 * Up to `count` entries of `name` after `after`: for a fork read before its fork point,
 * the source's entries up to the point (recursively), then the fork's own (all after
 * the point). Inherited entries never change, so reading each level apart is
 * consistent.
 *
 * @internal
 */
export const readThrough = <E>(readOwn: ReadOwn<E>) => {
  const read = (name: string, after: string, count: number): Effect.Effect<ReadonlyArray<DurableEntry>, E> =>
    Effect.gen(function*() {
      const own = yield* readOwn(name, after, count)
      if (Option.isNone(own.forkOf) || !isAfter(own.forkOf.value.at, after)) return own.entries
      const { at, source } = own.forkOf.value
      const inherited = (yield* read(source, after, count)).filter((entry) => !isAfter(entry.id, at))
      // A full page of inherited entries may have more behind it.
      if (inherited.length === count) return inherited
      return [...inherited, ...own.entries.slice(0, count - inherited.length)]
    })
  return read
}
