import { describe, expect, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Schema from "effect/Schema"
import { Json, OutputItem, SchemaGuard, StreamEvent, UITurnEvent, UIUpsert, Usage } from "../src/index.js"
import { Compiler } from "../src/internal/guardCompiler.js"

const optional = <S extends Schema.Schema.All>(schema: S) => Schema.optionalWith(schema, { exact: true })

interface Tree {
  readonly name: string
  readonly children: ReadonlyArray<Tree>
}
const Tree: Schema.Schema<Tree> = Schema.Struct({
  name: Schema.String,
  children: Schema.Array(Schema.suspend(() => Tree))
})

const Delta = Schema.Union(
  Schema.Struct({ type: Schema.Literal("text"), text: Schema.String }),
  Schema.Struct({
    type: Schema.Literal("json"),
    partial: Schema.String,
    index: optional(Schema.Int.pipe(Schema.nonNegative()))
  }),
  Schema.Struct({ type: Schema.Literal("json", "other"), note: Schema.NullOr(Schema.String) }),
  Schema.Struct({ kind: Schema.Literal(1), value: Schema.Number })
)

// schemas whose type and encoded sides are the same shape, and no filter reads a struct
const plain: ReadonlyArray<readonly [string, Schema.Schema.AnyNoContext]> = [
  [
    "literals and keywords",
    Schema.Tuple(Schema.Literal("a", 1, true, null), Schema.String, Schema.Number, Schema.Boolean)
  ],
  [
    "optional and nullable fields",
    Schema.Struct({ a: optional(Schema.NullOr(Schema.String)), b: Schema.optional(Schema.Number), c: Schema.Boolean })
  ],
  [
    "refinements",
    Schema.Struct({ index: Schema.Int.pipe(Schema.nonNegative()), name: Schema.String.pipe(Schema.minLength(2)) })
  ],
  ["a discriminated union", Delta],
  [
    "a struct with a record",
    Schema.Struct(
      { count: optional(Schema.NullOr(Schema.Number)) },
      Schema.Record({ key: Schema.String, value: Json.JsonValue })
    )
  ],
  ["a record", Schema.Record({ key: Schema.String, value: Schema.Array(Schema.Number) })],
  ["tuples", Schema.Tuple([Schema.String, Schema.optionalElement(Schema.Number)], Schema.Boolean)],
  ["a recursive schema", Tree],
  ["declarations", Schema.Struct({ value: Json.JsonValue, object: optional(Json.JsonObject) })],
  ["a declaration read through its decoder", Schema.Struct({ at: Schema.DateFromSelf })],
  [
    "enums and template literals",
    Schema.Struct({ e: Schema.Enums({ A: "a", B: 2 }), t: Schema.TemplateLiteral("item_", Schema.Number) })
  ],
  ["an empty struct", Schema.Struct({})],
  ["unknown fields", Schema.Struct({ anything: Schema.Unknown, maybe: Schema.Union(Schema.Undefined, Schema.String) })],
  ["Usage", Usage.Usage],
  ["OutputItem", OutputItem.OutputItem],
  ["UIUpsert", UIUpsert.UIUpsert],
  ["UITurnEvent", UITurnEvent.UITurnEvent]
]

// schemas the decoder changes, or whose filters read a whole struct
const changing: ReadonlyArray<readonly [string, Schema.Schema.AnyNoContext]> = [
  ["a transformation in a field", Schema.Struct({ n: Schema.NumberFromString, s: Schema.String })],
  [
    "a transformation after a plain member",
    Schema.Union(
      Schema.Struct({ type: Schema.Literal("a"), text: Schema.String }),
      Schema.transform(
        Schema.Struct({ type: Schema.String }),
        Schema.Struct({ type: Schema.Literal("x"), name: Schema.String }),
        {
          strict: true,
          decode: ({ type }) => ({ type: "x" as const, name: type }),
          encode: ({ name }) => ({ type: name })
        }
      )
    )
  ],
  [
    "a filter over a struct",
    Schema.Struct({ a: optional(Schema.NullOr(Schema.String)), b: optional(Schema.NullOr(Schema.Number)) }).pipe(
      Schema.filter((value) => Object.keys(value).length > 1 || "two fields")
    )
  ],
  ["a class", Schema.Struct({ at: Schema.DateFromString, tags: Schema.Array(Schema.Trim) })],
  ["a declaration with type parameters", Schema.Struct({ values: Schema.ReadonlySetFromSelf(Schema.Number) })],
  ["StreamEvent (a filter over the envelope)", StreamEvent.StreamEvent],
  ["parse options", Schema.Struct({ a: Schema.String }).annotations({ parseOptions: { onExcessProperty: "error" } })]
]

/** Replaces, removes or adds something at a random place in a value. */
const mutate = (value: unknown, path: ReadonlyArray<number>, action: number, replacement: unknown): unknown => {
  if (typeof value !== "object" || value === null) return action % 3 === 0 ? replacement : value
  const keys = Object.keys(value)
  const copy: Record<string, unknown> | Array<unknown> = Array.isArray(value) ? [...value] : { ...value }
  const target = copy as Record<string, unknown>
  if (path.length === 0 || keys.length === 0) {
    switch (action % 4) {
      case 0:
        return replacement
      case 1:
        if (keys.length > 0) delete target[keys[(path[0] ?? 0) % keys.length]!]
        return copy
      case 2:
        target[`extra_${action}`] = replacement
        return copy
      default:
        if (keys.length > 0) target[keys[(path[0] ?? 0) % keys.length]!] = replacement
        return copy
    }
  }
  const key = keys[path[0]! % keys.length]!
  target[key] = mutate(target[key], path.slice(1), action, replacement)
  return copy
}

/** Whether every property the decoder kept is in the input, with the same leaves. */
const isProjectionOf = (decoded: unknown, input: unknown): boolean => {
  if (typeof decoded !== "object" || decoded === null) return Object.is(decoded, input)
  if (typeof input !== "object" || input === null) return false
  if (Array.isArray(decoded)) {
    return Array.isArray(input) && decoded.length === input.length &&
      decoded.every((item, i) => isProjectionOf(item, input[i]))
  }
  return Object.keys(decoded).every(
    (key) =>
      Object.prototype.hasOwnProperty.call(input, key) &&
      isProjectionOf((decoded as Record<string, unknown>)[key], (input as Record<string, unknown>)[key])
  )
}

const inputs = (schema: Schema.Schema.AnyNoContext): FastCheck.Arbitrary<unknown> => {
  const encoded = Arbitrary.make(Schema.encodedSchema(schema))
  const typed = Arbitrary.make(Schema.typeSchema(schema))
  const valid = FastCheck.oneof(encoded, typed)
  return FastCheck.oneof(
    valid,
    FastCheck.tuple(
      valid,
      FastCheck.array(FastCheck.nat(), { maxLength: 4 }),
      FastCheck.nat(),
      FastCheck.oneof(FastCheck.jsonValue(), FastCheck.anything())
    ).map(
      ([value, path, action, replacement]) => mutate(value, path, action, replacement)
    ),
    FastCheck.jsonValue(),
    FastCheck.anything()
  )
}

const runs = { numRuns: 300 }

/** `Schema.is`, or `undefined` where it throws (a union's search calls `String` on a literal field). */
const tryIs = (is: (u: unknown) => boolean, u: unknown): boolean | undefined => {
  try {
    return is(u)
  } catch {
    return undefined
  }
}

/** A check's verdict, or "throws" where the parser it hands a node to throws (as `tryIs` explains). */
const outcome = (check: (u: unknown) => number, u: unknown): number | "throws" => {
  try {
    return check(u)
  } catch {
    return "throws"
  }
}

describe("SchemaGuard", () => {
  for (const [name, schema] of [...plain, ...changing]) {
    it(`is agrees with Schema.is: ${name}`, () => {
      const expected = Schema.is(schema)
      const guard = SchemaGuard.is(schema)
      FastCheck.assert(
        FastCheck.property(inputs(schema), (u) => [guard(u), undefined].includes(tryIs(expected, u))),
        runs
      )
    }, 60_000)

    it(`decodesToItself only passes what decodes to itself: ${name}`, () => {
      const decode = Schema.decodeUnknownEither(schema)
      const guard = SchemaGuard.decodesToItself(schema)
      FastCheck.assert(
        FastCheck.property(inputs(schema), (u) => {
          if (!guard(u)) return true
          const decoded = decode(u)
          return Either.isRight(decoded) && isProjectionOf(decoded.right, u)
        }),
        runs
      )
    }, 60_000)
  }

  for (const [name, schema] of plain) {
    it(`decodesToItself passes every valid value: ${name}`, () => {
      const guard = SchemaGuard.decodesToItself(schema)
      const valid = Schema.is(schema)
      FastCheck.assert(
        FastCheck.property(inputs(schema), (u) => {
          // a missing key of a field that accepts `undefined` is the decoder's to judge
          if (name === "unknown fields") return !guard(u) || tryIs(valid, u) !== false
          return [guard(u), undefined].includes(tryIs(valid, u))
        }),
        runs
      )
    }, 60_000)
  }

  it("StreamEvent.decodesToItself passes exactly the valid events, and only as they decode", () => {
    const decode = Schema.decodeUnknownEither(StreamEvent.StreamEvent)
    const valid = Schema.is(StreamEvent.StreamEvent)
    FastCheck.assert(
      FastCheck.property(inputs(StreamEvent.StreamEvent), (u) => {
        const passes = StreamEvent.decodesToItself(u)
        if (!passes) return tryIs(valid, u) !== true
        const decoded = decode(u)
        return Either.isRight(decoded) && isProjectionOf(decoded.right, u)
      }),
      runs
    )
    const event = StreamEvent.envelope(
      { runId: "00000000-0000-4000-8000-000000000000" },
      { type: "item_cancelled", item_id: "i" },
      "00000000-0000-4000-8000-000000000001",
      0
    )
    expect(StreamEvent.decodesToItself(event)).toBe(true)
    expect(StreamEvent.decodesToItself({ ...event, type: "item_delta" })).toBe(false)
  }, 60_000)

  for (const [name, schema] of [...plain, ...changing]) {
    it(`generated source and closures give the same verdicts: ${name}`, () => {
      for (const mode of ["is", "decode"] as const) {
        const generated = new Compiler(mode, true).compile(schema.ast)
        const closures = new Compiler(mode, false).compile(schema.ast)
        FastCheck.assert(
          FastCheck.property(inputs(schema), (u) => outcome(generated, u) === outcome(closures, u)),
          runs
        )
      }
    }, 60_000)
  }

  it("a guard without generated source (a runtime that forbids Function) still agrees with Schema.is", () => {
    const check = new Compiler("is", false).compile(Delta.ast)
    const expected = Schema.is(Delta)
    FastCheck.assert(
      FastCheck.property(inputs(Delta), (u) => [check(u) === 1, undefined].includes(tryIs(expected, u))),
      runs
    )
  }, 60_000)

  it("a symbol-named or inherited property is read as the decoder reads it", () => {
    const key = Symbol.for("test/key")
    const schema = Schema.Struct({ [key]: Schema.String, text: optional(Schema.String) })
    const guard = SchemaGuard.is(schema)
    expect(guard({ [key]: "a" })).toBe(true)
    expect(guard({ [key]: 1 })).toBe(false)
    expect(guard({ text: "a" })).toBe(false)
    // an inherited `text` is not the struct's: the field is missing, and optional
    expect(guard(Object.assign(Object.create({ text: 1 }), { [key]: "a" }))).toBe(true)
    expect(Schema.is(schema)(Object.assign(Object.create({ text: 1 }), { [key]: "a" }))).toBe(true)
  })

  it("a member the decoder would transform stops the union's search", () => {
    const [, schema] = changing[1]!
    const guard = SchemaGuard.decodesToItself(schema)
    expect(guard({ type: "a", text: "hi" })).toBe(true)
    expect(guard({ type: "b" })).toBe(false)
    expect(Schema.decodeUnknownSync(schema)({ type: "b" })).toEqual({ type: "x", name: "b" })
  })

  it("a struct's filter sees the struct without its extra properties", () => {
    const [, schema] = changing[2]!
    const value = { a: "x", extra: 1 }
    expect(Schema.is(schema)(value)).toBe(false)
    expect(SchemaGuard.is(schema)(value)).toBe(false)
    expect(SchemaGuard.is(schema)({ a: "x", b: 1 })).toBe(true)
  })

  it("extra properties are allowed and kept", () => {
    const schema = Schema.Struct({ text: Schema.String })
    const value = { text: "hi", extra: [1] }
    expect(SchemaGuard.decodesToItself(schema)(value)).toBe(true)
    expect(SchemaGuard.is(schema)(value)).toBe(true)
  })

  it("rejects what the schema rejects, at any depth", () => {
    const guard = SchemaGuard.is(Tree)
    expect(guard({ name: "a", children: [{ name: "b", children: [] }] })).toBe(true)
    expect(guard({ name: "a", children: [{ name: "b", children: [{ name: 1, children: [] }] }] })).toBe(false)
    expect(guard({ name: "a" })).toBe(false)
    expect(SchemaGuard.is(Delta)({ type: "json", partial: "{", index: -1 })).toBe(false)
    expect(SchemaGuard.is(Delta)({ type: "json", note: null })).toBe(true)
  })
})
