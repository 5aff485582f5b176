/**
 * Identifier helpers shared by every stage.
 *
 * @since 0.1.0
 */
import { randomFillSync } from "node:crypto"

// Random bytes drawn 256 ids at a time (as `crypto.randomUUID` does), and the character
// codes of each id written into one array.
const pool = new Uint8Array(16 * 256)
let poolUsed = pool.length
const codes: Array<number> = new Array(36).fill(45)
const hexCodes: ReadonlyArray<number> = Array.from({ length: 16 }, (_, digit) => digit.toString(16).charCodeAt(0))

/**
 * A fresh random UUID (v4) for an event or emission, from the system's secure random
 * source. It is made as one flat string: `crypto.randomUUID` joins its 16 bytes with
 * `+`, which the engine keeps as a tree of about 490 bytes (against 70) until something
 * reads the id whole, and every event holds an id while it waits for its write.
 *
 * @since 0.1.0
 * @category constructors
 */
export const generateEventId = (): string => {
  if (poolUsed === pool.length) {
    randomFillSync(pool)
    poolUsed = 0
  }
  const at = poolUsed
  poolUsed += 16
  let out = 0
  for (let i = 0; i < 16; i++) {
    // the dashes stay where the array was filled with them
    if (i === 4 || i === 6 || i === 8 || i === 10) out++
    let byte = pool[at + i]!
    if (i === 6) byte = (byte & 0x0f) | 0x40 // version 4
    else if (i === 8) byte = (byte & 0x3f) | 0x80 // variant 10
    codes[out++] = hexCodes[byte >> 4]!
    codes[out++] = hexCodes[byte & 0x0f]!
  }
  return String.fromCharCode.apply(null, codes)
}

// a hex digit, either case: 0-9, A-F, a-f
const isHexCode = (code: number): boolean =>
  (code >= 48 && code <= 57) || (code >= 65 && code <= 70) || (code >= 97 && code <= 102)

/**
 * Whether a string is a UUID in its canonical 8-4-4-4-12 hex form.
 *
 * @since 0.1.0
 * @category guards
 */
export const isUuid = (value: string): boolean => {
  // a character loop rather than a regular expression: every event written is checked
  if (value.length !== 36) return false
  for (let i = 0; i < 36; i++) {
    const code = value.charCodeAt(i)
    if (i === 8 || i === 13 || i === 18 || i === 23 ? code !== 45 : !isHexCode(code)) return false
  }
  return true
}

const hex = (bytes: Uint8Array): string => Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")

/**
 * A sequence of event ids for one turn: UUIDs in the canonical v4 form (version `4`,
 * variant `10`), built from one random base and a counter instead of one random draw per
 * id.
 *
 * The first 74 random bits (the first three groups and the fourth, minus the version
 * and variant bits) are drawn once per sequence. The last group is a 48-bit counter
 * written as two halves of six hex digits: the high half starts at a random value, the
 * low half at a random value in [2^20, 2^23) and counts up by one per id (when it
 * reaches 2^24 it goes back to 2^20 and the high half counts up). Ids of one sequence
 * therefore never repeat before about 2^47 ids, and two sequences can only share an id
 * if they drew the same 74-bit base, which for `n` sequences happens with probability
 * below n² / 2^75 (about 10^-7 after 10^8 turns, 10^-10 for ids that also collide in
 * the counter). What is lost is only unpredictability within a turn: the next id of a
 * sequence is the previous one plus one, so these ids are names, never secrets.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeSequence = (): () => string => {
  const random = new Uint8Array(16)
  randomFillSync(random)
  random[6] = (random[6]! & 0x0f) | 0x40 // version 4
  random[8] = (random[8]! & 0x3f) | 0x80 // variant 10
  const base = hex(random)
  const prefix = [base.slice(0, 8), base.slice(8, 12), base.slice(12, 16), base.slice(16, 20), ""].join("-")
  let high = (random[10]! << 16) | (random[11]! << 8) | random[12]!
  // the first 30 characters as one flat string
  let head = [prefix, base.slice(20, 26)].join("")
  // six hex digits without padding: four from `low >> 8` (at least 0x1000), then the
  // last two from a table, so each id is one concatenation and a `toString` runs only
  // once per 256 ids
  let low = 0x100000 + (((random[13]! & 0x3f) << 16) | (random[14]! << 8) | random[15]!)
  let stem = [head, (low >> 8).toString(16)].join("")
  return () => {
    const id = stem + lastHexDigits[low & 0xff]!
    low++
    if (low === 0x1000000) {
      low = 0x100000
      high = (high + 1) & 0xffffff
      head = [prefix, high.toString(16).padStart(6, "0")].join("")
    }
    if ((low & 0xff) === 0) stem = [head, (low >> 8).toString(16)].join("")
    return id
  }
}

/** The two hex digits of every byte. */
const lastHexDigits: ReadonlyArray<string> = Array.from(
  { length: 256 },
  (_, byte) => byte.toString(16).padStart(2, "0")
)
