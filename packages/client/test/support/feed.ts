/**
 * What the tests of following a turn feed the client: a turn's ids, an upsert of it,
 * an SSE frame, and its turn events.
 */
import type { Upsert } from "../../src/Wire.js"

export const turnId = "6f1c2b7e-0c3a-4d5e-8f90-1a2b3c4d5e6f"
export const threadId = "7a1c2b7e-0c3a-4d5e-8f90-1a2b3c4d5e6f"

/** An upsert of a message item of the turn (`updated` unless told). */
export const upsert = (itemId: string, content: string, changeType: Upsert["changeType"] = "updated"): Upsert => ({
  type: "item_upsert",
  turnId,
  threadId,
  itemId,
  itemType: "message",
  changeType,
  content
})

/** One SSE frame. */
export const frame = (id: string, event: string, data: unknown) =>
  `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`

/** The turn's `turn_started` and `turn_completed` events. */
export const started = { type: "turn_started", turnId, threadId, modelId: "m", providerId: "p" }
export const completed = { type: "turn_completed", turnId, threadId, status: "complete" }
