/** An agent message's upsert, for tests that write Stream B by hand. */
import type { UIUpsert } from "@sluice/core"

/** The upsert of message `itemId` of a turn, with `content`. */
export const messageUpsert = (
  turnId: string,
  threadId: string,
  itemId: string,
  content: string,
  changeType: UIUpsert.UIUpsertChangeType = "updated"
): UIUpsert.UIUpsert => ({
  type: "item_upsert",
  turnId,
  threadId,
  itemId,
  itemType: "message",
  changeType,
  content,
  origin: "agent"
})
