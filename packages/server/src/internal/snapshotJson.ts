/**
 * The JSON text of a snapshot assembled from the items' JSON texts as Stream B holds
 * them, so that a snapshot of long items is never parsed into objects and encoded
 * again: the small header is encoded, the items' texts are put in as they are.
 *
 * @internal
 */

/**
 * The JSON text of `header` with an `items` array of `items`, each already a JSON text
 * of one value. `JSON.parse` of the result equals `{ ...header, items: items.map(JSON.parse) }`.
 * `header` must encode as a non-empty JSON object and must not have `items`.
 *
 * @internal
 */
export const render = (header: object, items: ReadonlyArray<string>): string => {
  const head = JSON.stringify(header)
  return `${head.slice(0, -1)},"items":[${items.join(",")}]}`
}
