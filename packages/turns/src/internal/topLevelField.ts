/**
 * The string value of one top-level field of a JSON object's text, found without
 * parsing the rest: values before it are skipped (strings by their closing quote,
 * objects and arrays by their brackets), so an upsert's item id is read from its
 * payload without decoding a content of megabytes.
 *
 * @internal
 */

// The index just past the string that opens at `at` (a `"`), or -1.
const skipString = (text: string, at: number): number => {
  let from = at + 1
  while (true) {
    const quote = text.indexOf("\"", from)
    if (quote < 0) return -1
    let slashes = 0
    for (let i = quote - 1; text.charCodeAt(i) === 92; i--) slashes++
    if (slashes % 2 === 0) return quote + 1
    from = quote + 1
  }
}

const isSpace = (code: number): boolean => code === 32 || code === 9 || code === 10 || code === 13

const skipSpace = (text: string, at: number): number => {
  let i = at
  while (i < text.length && isSpace(text.charCodeAt(i))) i++
  return i
}

// The index just past the value that starts at `at`, or -1.
const skipValue = (text: string, at: number): number => {
  const first = text[at]
  if (first === "\"") return skipString(text, at)
  if (first === "{" || first === "[") {
    let depth = 0
    let i = at
    while (i < text.length) {
      const c = text[i]
      if (c === "\"") {
        i = skipString(text, i)
        if (i < 0) return -1
        continue
      }
      if (c === "{" || c === "[") depth++
      else if (c === "}" || c === "]") {
        depth--
        if (depth === 0) return i + 1
      }
      i++
    }
    return -1
  }
  let i = at
  while (i < text.length && text[i] !== "," && text[i] !== "}" && !isSpace(text.charCodeAt(i))) i++
  return i === at ? -1 : i
}

const parseString = (literal: string): string | undefined => {
  try {
    const value: unknown = JSON.parse(literal)
    return typeof value === "string" ? value : undefined
  } catch {
    return undefined
  }
}

/**
 * The string value of the top-level field `name` of the JSON object `text`; undefined
 * when the text is not an object, the field is missing or not a string, or the text is
 * malformed before the field.
 *
 * @internal
 */
export const topLevelString = (text: string, name: string): string | undefined => {
  let i = skipSpace(text, 0)
  if (text[i] !== "{") return undefined
  i = skipSpace(text, i + 1)
  while (i < text.length && text[i] === "\"") {
    const keyEnd = skipString(text, i)
    if (keyEnd < 0) return undefined
    const key = parseString(text.slice(i, keyEnd))
    i = skipSpace(text, keyEnd)
    if (text[i] !== ":") return undefined
    i = skipSpace(text, i + 1)
    const valueEnd = skipValue(text, i)
    if (valueEnd < 0) return undefined
    if (key === name) return text[i] === "\"" ? parseString(text.slice(i, valueEnd)) : undefined
    i = skipSpace(text, valueEnd)
    if (text[i] !== ",") return undefined
    i = skipSpace(text, i + 1)
  }
  return undefined
}
