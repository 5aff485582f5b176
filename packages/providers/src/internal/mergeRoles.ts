import type { Json } from "@sluice/core"

/**
 * Consecutive messages of one role merged into one, empty ones dropped: Anthropic's
 * `messages` (`content` blocks) and Gemini's `contents` (`parts`) both want a user
 * turn's tool results and text together, and the roles alternating.
 *
 * @internal
 */
export const mergeRoles = <Role extends string>(
  messages: ReadonlyArray<readonly [Role, ReadonlyArray<Json.JsonObject>]>
): Array<{ readonly role: Role; readonly entries: Array<Json.JsonObject> }> => {
  const out: Array<{ readonly role: Role; readonly entries: Array<Json.JsonObject> }> = []
  for (const [role, entries] of messages) {
    if (entries.length === 0) continue
    const last = out.at(-1)
    if (last !== undefined && last.role === role) last.entries.push(...entries)
    else out.push({ role, entries: [...entries] })
  }
  return out
}
