/**
 * `DurableSubscriptions` in process memory, with the semantics of the live layer:
 * versioned conditional saves, records kept as JSON (so a loaded record is never
 * shared with a caller), inserts counted within the limits, and the names of the
 * streams it was told about.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { DurableSubscriptionsService, InsertOutcome } from "../DurableSubscriptions.js"
import { decodeRecord, encodeRecord, recordKey } from "./subscriptionRecord.js"

/**
 * A fresh, empty in-memory store holding at most `maxSubscriptions`.
 *
 * @internal
 */
export const make = (maxSubscriptions: number): Effect.Effect<DurableSubscriptionsService> =>
  Effect.sync(() => {
    const records = new Map<string, { readonly json: string; readonly version: number }>()
    // every id counted (an inserted one, or one saved without the limits), and its subscriber
    const counted = new Map<string, string | undefined>()
    const owners = new Map<string, number>()
    const streams = new Set<string>()
    let signingKey: string | undefined
    let revision = 0
    const release = (id: string) => {
      if (!counted.has(id)) return
      const owner = counted.get(id)
      counted.delete(id)
      if (owner === undefined) return
      const left = (owners.get(owner) ?? 1) - 1
      if (left <= 0) owners.delete(owner)
      else owners.set(owner, left)
    }
    const service: DurableSubscriptionsService = {
      load: (id) =>
        Effect.suspend(() => {
          const stored = records.get(id)
          return stored === undefined
            ? Effect.succeedNone
            : Effect.map(
              decodeRecord(recordKey("memory", id), stored.json),
              (subscription) => Option.some({ subscription, version: stored.version })
            )
        }),
      save: (subscription, expect) =>
        Effect.sync(() => {
          const version = records.get(subscription.id)?.version ?? 0
          if (version !== expect) return false
          records.set(subscription.id, { json: encodeRecord(subscription), version: version + 1 })
          if (!counted.has(subscription.id)) counted.set(subscription.id, undefined)
          revision++
          return true
        }),
      insert: (subscription, owner) =>
        Effect.sync((): InsertOutcome => {
          if (records.has(subscription.id)) return { _tag: "Exists" }
          if (!counted.has(subscription.id)) {
            if (counted.size >= maxSubscriptions) return { _tag: "TooMany", scope: "total", limit: maxSubscriptions }
            if (owner !== undefined && (owners.get(owner.key) ?? 0) >= owner.max) {
              return { _tag: "TooMany", scope: "owner", limit: owner.max }
            }
            counted.set(subscription.id, owner?.key)
            if (owner !== undefined) owners.set(owner.key, (owners.get(owner.key) ?? 0) + 1)
          }
          records.set(subscription.id, { json: encodeRecord(subscription), version: 1 })
          revision++
          return { _tag: "Inserted" }
        }),
      remove: (id) =>
        Effect.sync(() => {
          release(id)
          revision++
          return records.delete(id)
        }),
      ids: Effect.sync(() => [...records.keys()]),
      versions: (ids) => Effect.sync(() => ids.map((id) => records.get(id)?.version ?? 0)),
      revision: Effect.sync(() => revision),
      streamNames: Effect.sync(() => [...streams]),
      observe: (name, exists) =>
        Effect.sync(() => {
          if (exists) streams.add(name)
          else streams.delete(name)
        }),
      signingKey: (candidate) =>
        Effect.sync(() => {
          signingKey ??= candidate
          return signingKey
        })
    }
    return service
  })
