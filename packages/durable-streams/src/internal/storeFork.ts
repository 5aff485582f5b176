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
 * The deepest chain of forks a store creates by default (docs/http.md#fork-depth): a
 * stream that is no fork is level 0, its fork level 1, a fork of that fork level 2, and
 * a fork past level 100 is refused. A read, a commit with a TTL and a delete each go
 * up the chain one step a level, so the limit bounds what one request costs.
 *
 * @internal
 */
export const defaultMaxForkDepth = 100

/**
 * The read of a store layer that `readThrough` builds on: a stream's fork point (when it
 * is a fork) and its own entries after `after`, up to `count`, but none when `after`
 * is before its fork point (the read starts in its source's entries: its own are read
 * later, once the source's have been).
 *
 * @internal
 */
export type ReadOwn<E> = (
  name: string,
  after: string,
  count: number
) => Effect.Effect<{ readonly forkOf: Option.Option<ForkPoint>; readonly entries: ReadonlyArray<DurableEntry> }, E>

// A level of the chain the read went up through: the fork, and what of its own entries
// its own forks below see (ids up to `cap`; none: all).
interface Level {
  readonly name: string
  readonly at: string
  readonly cap: string | undefined
}

const upTo = (entries: ReadonlyArray<DurableEntry>, cap: string | undefined) =>
  cap === undefined ? entries : entries.filter((entry) => !isAfter(entry.id, cap))

const lower = (cap: string | undefined, at: string): string => cap === undefined || isAfter(cap, at) ? at : cap

/**
 * Up to `count` entries of `name` after `after`: for a fork read before its fork point,
 * its source's entries up to the point (and so on up the chain), then its own. Linear
 * in the chain: the read goes up once (one `readOwn` a level, reading nothing but the
 * fork point where the read starts further up), reads the level where it starts, then
 * comes down reading each fork's own entries only while the page has room, each entry
 * looked at once (the recursive read filtered every inherited page again at each level:
 * quadratic in the depth). Inherited entries never change, so reading each level apart
 * is consistent.
 *
 * @internal
 */
export const readThrough =
  <E>(readOwn: ReadOwn<E>) =>
  (name: string, after: string, count: number): Effect.Effect<ReadonlyArray<DurableEntry>, E> =>
    Effect.gen(function*() {
      const levels: Array<Level> = []
      let cap: string | undefined
      let at = name
      let top: ReadonlyArray<DurableEntry> = []
      for (let steps = 0; steps <= maxChain; steps++) {
        const own = yield* readOwn(at, after, count)
        if (Option.isNone(own.forkOf) || !isAfter(own.forkOf.value.at, after)) {
          top = upTo(own.entries, cap)
          break
        }
        levels.push({ name: at, at: own.forkOf.value.at, cap })
        cap = lower(cap, own.forkOf.value.at)
        at = own.forkOf.value.source
      }
      const page = [...top]
      for (let i = levels.length - 1; i >= 0 && page.length < count; i--) {
        const level = levels[i]!
        // a fork below branched off before this level's own entries: none of them is seen
        if (level.cap !== undefined && !isAfter(level.cap, level.at)) continue
        const own = yield* readOwn(level.name, level.at, count - page.length)
        for (const entry of upTo(own.entries, level.cap)) page.push(entry)
      }
      return page.length > count ? page.slice(0, count) : page
    })
