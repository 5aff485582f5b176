/**
 * The fold of a turn's Stream B into its snapshot, generic in what it keeps of each
 * item (the decoded upsert, or its JSON text).
 *
 * @internal
 */
import type { StreamBMessage, UIUpsert } from "@sluice/core"
import type { TurnSnapshot } from "../TurnSnapshot.js"

/**
 * A snapshot but its items, and the items kept.
 *
 * @internal
 */
export interface Folded<I> {
  readonly header: Omit<TurnSnapshot, "items">
  readonly items: ReadonlyArray<I>
}

/**
 * A fold in progress: `add` each payload in stream order, with its JSON text as stored;
 * then `result`.
 *
 * @internal
 */
export interface Fold<I> {
  readonly add: (entryId: string, payload: StreamBMessage.UIPayload, text: string) => void
  readonly result: () => Folded<I>
}

/**
 * A fresh fold for a turn. Items keep the position of their first upsert and, as
 * `keep` makes it of the upsert and its text, the content of their last.
 *
 * @internal
 */
export const make = <I>(turnId: string, keep: (upsert: UIUpsert.UIUpsert, text: string) => I): Fold<I> => {
  const items = new Map<string, I>()
  let snapshot: Omit<TurnSnapshot, "items"> = { turnId, status: "streaming", lastEventId: "0-0", entries: 0 }
  return {
    add: (entryId, payload, text) => {
      snapshot = { ...snapshot, lastEventId: entryId, entries: snapshot.entries + 1 }
      switch (payload.type) {
        case "item_upsert": {
          items.set(payload.itemId, keep(payload, text))
          if (snapshot.threadId === undefined) snapshot = { ...snapshot, threadId: payload.threadId }
          if (snapshot.providerId === undefined && payload.providerId !== undefined) {
            snapshot = { ...snapshot, providerId: payload.providerId }
          }
          return
        }
        case "turn_started": {
          snapshot = {
            ...snapshot,
            threadId: payload.threadId,
            ...(payload.modelId === undefined ? {} : { modelId: payload.modelId }),
            ...(payload.providerId === undefined ? {} : { providerId: payload.providerId })
          }
          return
        }
        case "turn_completed": {
          snapshot = {
            ...snapshot,
            threadId: payload.threadId,
            status: payload.status,
            ...(payload.usage === undefined ? {} : { usage: payload.usage })
          }
          return
        }
        case "turn_error": {
          snapshot = { ...snapshot, threadId: payload.threadId, status: "error", error: payload.error }
          return
        }
      }
    },
    result: () => ({ header: snapshot, items: Array.from(items.values()) })
  }
}
