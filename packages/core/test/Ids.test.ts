import { describe, expect, it } from "@effect/vitest"
import { Ids } from "../src/index.js"

const v4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe("Ids.generateEventId", () => {
  it("gives canonical v4 UUIDs, all different, every random digit taking every value", () => {
    // more than one pool of random bytes (256 ids), so the refill is crossed
    const ids = Array.from({ length: 5000 }, Ids.generateEventId)
    for (const id of ids) {
      expect(id).toMatch(v4)
      expect(Ids.isUuid(id)).toBe(true)
    }
    expect(new Set(ids).size).toBe(ids.length)
    // every hex position that is not fixed by the version sees all 16 digits
    for (let i = 0; i < 36; i++) {
      if (i === 8 || i === 13 || i === 14 || i === 18 || i === 19 || i === 23) continue
      expect([i, new Set(ids.map((id) => id[i])).size]).toEqual([i, 16])
    }
    // the variant digit takes its four values
    expect(new Set(ids.map((id) => id[19])).size).toBe(4)
  })
})

describe("Ids.makeSequence", () => {
  it("gives canonical v4 UUIDs, all different, counting up in the last group", () => {
    const next = Ids.makeSequence()
    const ids = Array.from({ length: 5000 }, next)
    for (const id of ids) {
      expect(id).toMatch(v4)
      expect(Ids.isUuid(id)).toBe(true)
    }
    expect(new Set(ids).size).toBe(ids.length)
    const last = (id: string) => parseInt(id.slice(24), 16)
    const steps = ids.slice(1).map((id, i) => last(id) - last(ids[i]!))
    // one step per id; where the low half wraps, the high half counts up instead
    expect(steps.every((step) => step === 1 || step === 0x1000000 - 0xefffff)).toBe(true)
    expect(ids.every((id) => id.slice(0, 24) === ids[0]!.slice(0, 24))).toBe(true)
  })

  it("draws a new random base for every sequence", () => {
    const bases = new Set(Array.from({ length: 200 }, () => Ids.makeSequence()().slice(0, 24)))
    expect(bases.size).toBe(200)
  })
})

describe("Ids.isUuid", () => {
  const canonical = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
  it("accepts the 8-4-4-4-12 hex form in either case and nothing else", () => {
    const id = Ids.generateEventId()
    const cases = [id, id.toUpperCase(), "", id.slice(1), `${id}0`, ` ${id.slice(1)}`, id.replace("-", "0")]
    // every single-character change of a valid id, to a character on either side of each range
    for (let i = 0; i < id.length; i++) {
      for (const c of ["/", "0", "9", ":", "@", "A", "F", "G", "`", "a", "f", "g", "-", "\u0660"]) {
        cases.push(id.slice(0, i) + c + id.slice(i + 1))
      }
    }
    for (const value of cases) expect([value, Ids.isUuid(value)]).toEqual([value, canonical.test(value)])
  })
})
