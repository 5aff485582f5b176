/**
 * Effect 4 derives property-test values from a schema with its own generator
 * (`effect/Arbitrary`), no longer with fast-check. `fromSchema` hands those values to
 * fast-check, so a property can still mix them with fast-check's own arbitraries: each
 * value is Effect's sample for a seed and a size (0 to 10, Effect's default) that
 * fast-check draws, and shrinks. Effect's generator makes some objects without a
 * prototype (`Object.create(null)`), where a decoder makes ordinary objects: those are
 * given `Object.prototype`, their keys in the same order.
 */
import * as Arbitrary from "effect/Arbitrary"
import * as Effect from "effect/Effect"
import type * as Schema from "effect/Schema"
import * as FastCheck from "fast-check"

const isPlain = (value: object): boolean => {
  const proto = Object.getPrototypeOf(value)
  return proto === null || proto === Object.prototype
}

/** The same value, every object without a prototype given `Object.prototype`. */
const ordinary = (value: unknown): unknown => {
  if (typeof value !== "object" || value === null) return value
  if (Array.isArray(value)) return value.map(ordinary)
  if (!isPlain(value)) return value
  const out: Record<PropertyKey, unknown> = {}
  for (const key of Reflect.ownKeys(value)) {
    const descriptor = Object.getOwnPropertyDescriptor(value, key)
    if (descriptor === undefined) continue
    Object.defineProperty(
      out,
      key,
      "value" in descriptor ? { ...descriptor, value: ordinary(descriptor.value) } : descriptor
    )
  }
  return out
}

/** The values of a schema's type, as a fast-check arbitrary. */
export const fromSchema = <S extends Schema.Constraint>(schema: S): FastCheck.Arbitrary<S["Type"]> => {
  const arbitrary = Arbitrary.schema(schema)
  return FastCheck.tuple(FastCheck.integer({ min: 0, max: 0x7fffffff }), FastCheck.integer({ min: 0, max: 10 })).map(
    ([seed, size]) => {
      // a small size can leave a filter nothing to accept (a struct filter that wants its optional
      // fields): the same seed is tried again at Effect's default size
      const [value] = Effect.runSync(
        Arbitrary.sampleEffect(arbitrary, { count: 1, seed, size }).pipe(
          Effect.catch(() => Arbitrary.sampleEffect(arbitrary, { count: 1, seed }))
        )
      )
      if (value === undefined) throw new Error("Arbitrary.sampleEffect gave no value")
      return ordinary(value) as S["Type"]
    }
  )
}
