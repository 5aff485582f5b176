/**
 * Tool call ids in history form (docs/views.md#icontent): stored conversations name every tool call
 * `hist_tool_...`, whatever provider made it, and each id is turned back into the form
 * its provider expects when the history is sent again.
 *
 * The mapping is reversible: `fromHistory(toHistory(id)) === id` for every id that is not
 * already in history form.
 *
 * | provider id            | history id                  |
 * |---|---|
 * | `call_X` (OpenAI)      | `hist_tool_X` (docs/views.md's rule) |
 * | `call_X`, X starting with `call_`, `toolu_` or `raw_` | `hist_tool_call_X` |
 * | `toolu_X` (Anthropic)  | `hist_tool_toolu_X`         |
 * | any other id `Y`       | `hist_tool_raw_Y`           |
 *
 * What it cannot map: an id already in history form is kept as it is by `toHistory`
 * (so normalizing twice is harmless), and `fromHistory` returns an id that is not in
 * history form unchanged (it is taken to be a provider id already).
 *
 * @since 0.1.0
 */

const historyPrefix = "hist_tool_"
const openAiPrefix = "call_"
const anthropicPrefix = "toolu_"
const rawPrefix = "raw_"

const needsEscape = (rest: string): boolean =>
  rest.startsWith(openAiPrefix) || rest.startsWith(anthropicPrefix) || rest.startsWith(rawPrefix)

/**
 * Whether an id is in history form (`hist_tool_...`).
 *
 * @since 0.1.0
 * @category guards
 */
export const isHistoryId = (id: string): boolean => id.startsWith(historyPrefix)

/**
 * A provider's tool call id in history form. Ids already in history form are returned
 * unchanged.
 *
 * @since 0.1.0
 * @category conversions
 */
export const toHistory = (id: string): string => {
  if (isHistoryId(id)) return id
  if (id.startsWith(openAiPrefix)) {
    const rest = id.slice(openAiPrefix.length)
    return needsEscape(rest) ? historyPrefix + id : historyPrefix + rest
  }
  if (id.startsWith(anthropicPrefix)) return historyPrefix + id
  return historyPrefix + rawPrefix + id
}

/**
 * The provider id a history id was made from (the inverse of `toHistory`). Ids not in
 * history form are returned unchanged.
 *
 * @since 0.1.0
 * @category conversions
 */
export const fromHistory = (id: string): string => {
  if (!isHistoryId(id)) return id
  const rest = id.slice(historyPrefix.length)
  if (rest.startsWith(openAiPrefix) || rest.startsWith(anthropicPrefix)) return rest
  if (rest.startsWith(rawPrefix)) return rest.slice(rawPrefix.length)
  return openAiPrefix + rest
}
