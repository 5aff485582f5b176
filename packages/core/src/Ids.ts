/**
 * Identifier helpers shared by every stage.
 *
 * @since 0.1.0
 */
import { randomFillSync, randomUUID } from "node:crypto"

/**
 * A fresh random UUID (v4) for an event or emission.
 *
 * @since 0.1.0
 * @category constructors
 */
export const generateEventId = (): string => randomUUID()

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * Whether a string is a UUID in its canonical 8-4-4-4-12 hex form.
 *
 * @since 0.1.0
 * @category guards
 */
export const isUuid = (value: string): boolean => uuidPattern.test(value)

const hex = (bytes: Uint8Array): string => Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")

/**
 * A sequence of event ids for one turn: UUIDs in the canonical v4 form (version `4`,
 * variant `10`), built from one random base and a counter instead of one random draw per
 * id.
 *
 * The first 74 random bits (the first three groups and the fourth, minus the version
 * and variant bits) are drawn once per sequence; the last group (48 bits) is a counter
 * that starts at a random value below 2^47 and counts up by one per id. Ids of one
 * sequence therefore never repeat (the counter cannot wrap in fewer than 2^47 ids), and
 * two sequences can only share an id if they drew the same 74-bit base, which for `n`
 * sequences happens with probability below n² / 2^75 (about 10^-10 after 10^8 turns).
 * What is lost is only unpredictability within a turn: the next id of a sequence is
 * the previous one plus one, so these ids are names, never secrets.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeSequence = (): (() => string) => {
  const random = new Uint8Array(16)
  randomFillSync(random)
  random[6] = (random[6]! & 0x0f) | 0x40 // version 4
  random[8] = (random[8]! & 0x3f) | 0x80 // variant 10
  const base = hex(random)
  const prefix = `${base.slice(0, 8)}-${base.slice(8, 12)}-${base.slice(12, 16)}-${base.slice(16, 20)}-`
  // below 2^47: six random bytes with the top bit cleared
  let counter = ((random[10]! & 0x7f) * 2 ** 40) + random[11]! * 2 ** 32 + ((random[12]! << 24) >>> 0) + (random[13]! << 16) + (random[14]! << 8) + random[15]!
  return () => {
    const id = prefix + counter.toString(16).padStart(12, "0")
    counter++
    return id
  }
}
