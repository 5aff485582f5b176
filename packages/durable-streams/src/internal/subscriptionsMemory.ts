/**
 * `DurableSubscriptions` in process memory, with the semantics of the live layer:
 * versioned conditional saves, records kept as JSON (so a loaded record is never
 * shared with a caller), and the names of the streams it was told about.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { DurableSubscriptionsService } from "../DurableSubscriptions.js"
import { decodeRecord, encodeRecord, recordKey } from "./subscriptionRecord.js"

/**
 * A fresh, empty in-memory store.
 *
 * @internal
 */
export const make: Effect.Effect<DurableSubscriptionsService> = Effect.sync(() => {
  const records = new Map<string, { readonly json: string; readonly version: number }>()
  const streams = new Set<string>()
  let signingKey: string | undefined
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
        return true
      }),
    remove: (id) => Effect.sync(() => records.delete(id)),
    ids: Effect.sync(() => [...records.keys()]),
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
