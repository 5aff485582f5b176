import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as SchemaTransformation from "effect/SchemaTransformation"
import * as FastCheck from "fast-check"
import { Json, OutputItem, SchemaGuard, StreamEvent, UITurnEvent, UIUpsert, Usage } from "../src/index.js"
import { fromSchema } from "./support/arbitrary.js"

type AnySchema = Schema.Codec<unknown, unknown, never, never>

const optional = <S extends Schema.Constraint>(schema: S) => Schema.optionalKey(schema)

interface Tree {
  readonly name: string
  readonly children: ReadonlyArray<Tree>
}
const makeTree = (): Schema.Codec<Tree> => {
  const Tree: Schema.Codec<Tree> = Schema.Struct({
    name: Schema.String,
    children: Schema.Array(Schema.suspend((): Schema.Codec<Tree> => Tree))
  })
  return Tree
}
const Tree = makeTree()

const makeDelta = () =>
  Schema.Union([
    Schema.Struct({ type: Schema.Literal("text"), text: Schema.String }),
    Schema.Struct({
      type: Schema.Literal("json"),
      partial: Schema.String,
      index: optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)))
    }),
    Schema.Struct({ type: Schema.Literals(["json", "other"]), note: Schema.NullOr(Schema.String) }),
    Schema.Struct({ kind: Schema.Literal(1), value: Schema.Number })
  ])
const Delta = makeDelta()

// Each schema is made by a function, so that a test can have a second copy of it that shares no node with the first.
type Entry = readonly [string, () => AnySchema]

// schemas whose type and encoded sides are the same shape, and no filter reads a struct
const plainEntries: ReadonlyArray<Entry> = [
  [
    "literals and keywords",
    () =>
      Schema.Tuple([
        Schema.Union([Schema.Literals(["a", 1, true]), Schema.Null]),
        Schema.String,
        Schema.Number,
        Schema.Boolean
      ])
  ],
  [
    "optional and nullable fields",
    () =>
      Schema.Struct({ a: optional(Schema.NullOr(Schema.String)), b: Schema.optional(Schema.Number), c: Schema.Boolean })
  ],
  [
    "refinements",
    () =>
      Schema.Struct({
        index: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
        name: Schema.String.check(Schema.isMinLength(2))
      })
  ],
  ["a discriminated union", makeDelta],
  [
    "a struct with a record",
    () =>
      Schema.StructWithRest(
        Schema.Struct({ count: optional(Schema.NullOr(Schema.Number)) }),
        [Schema.Record(Schema.String, Json.JsonValue)]
      )
  ],
  ["a record", () => Schema.Record(Schema.String, Schema.Array(Schema.Number))],
  [
    "tuples",
    () => Schema.TupleWithRest(Schema.Tuple([Schema.String, Schema.optionalKey(Schema.Number)]), [Schema.Boolean])
  ],
  ["a recursive schema", makeTree],
  ["declarations", () => Schema.Struct({ value: Json.JsonValue, object: optional(Json.JsonObject) })],
  ["a declaration read through its decoder", () => Schema.Struct({ at: Schema.Date })],
  [
    "enums and template literals",
    () => Schema.Struct({ e: Schema.Enum({ A: "a", B: 2 }), t: Schema.TemplateLiteral(["item_", Schema.Number]) })
  ],
  ["an empty struct", () => Schema.Struct({})],
  [
    "unknown fields",
    () => Schema.Struct({ anything: Schema.Unknown, maybe: Schema.Union([Schema.Undefined, Schema.String]) })
  ],
  [
    // the guard tries `type`'s members only when `type` holds their literal, in the members' order, the catch-all
    // member wherever it stands
    "a tagged union with a catch-all member",
    () =>
      Schema.Union([
        Schema.Struct({ type: Schema.Literal("a"), text: Schema.String }),
        Schema.Struct({ type: Schema.String, other: optional(Schema.Number) }),
        Schema.Struct({ type: Schema.Literal("b"), index: Schema.Int, id: optional(Schema.NullOr(Schema.String)) }),
        Schema.Struct({ type: Schema.Literal("a"), note: Schema.Boolean }),
        Schema.Struct({ kind: Schema.Literal(2), type: Schema.Literal("c") })
      ])
  ],
  [
    "literals of every kind, with filters inside a union",
    () =>
      Schema.Struct({
        literal: Schema.Literals(["a", 0, 1.5, true, false, -2]),
        big: optional(Schema.Union([Schema.Literal(1n), Schema.BigInt])),
        filtered: Schema.Union([Schema.String.check(Schema.isMinLength(3)), Schema.Number.check(Schema.isInt())])
      })
  ],
  [
    "fields named like Object.prototype's properties, beside a record",
    () =>
      Schema.StructWithRest(
        Schema.Struct({
          constructor: optional(Schema.String),
          toString: optional(Schema.Number),
          ["__proto__"]: optional(Schema.NullOr(Schema.String)),
          valueOf: optional(Schema.Boolean)
        }),
        [Schema.Record(Schema.String, Schema.Union([Schema.String, Schema.Number, Schema.Boolean, Schema.Null]))]
      )
  ],
  [
    "wire chunks: nested structs, arrays, records and JSON values",
    () =>
      Schema.Struct({
        id: optional(Schema.String),
        choices: Schema.Array(Schema.Struct({
          index: optional(Schema.NullOr(Schema.Int)),
          delta: optional(Schema.NullOr(Schema.Struct({
            content: optional(Schema.NullOr(Schema.String)),
            tool_calls: optional(Schema.Array(Schema.Struct({
              index: optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
              function: optional(Schema.Struct({ arguments: optional(Schema.String) }))
            })))
          }))),
          finish_reason: optional(Schema.NullOr(Schema.String))
        })),
        usage: optional(
          Schema.StructWithRest(Schema.Struct({ total_tokens: optional(Schema.NullOr(Schema.Number)) }), [
            Schema.Record(Schema.String, Json.JsonValue)
          ])
        ),
        args: optional(Schema.NullOr(Json.JsonObject))
      })
  ],
  ["Usage", () => Usage.Usage],
  ["OutputItem", () => OutputItem.OutputItem],
  ["UIUpsert", () => UIUpsert.UIUpsert],
  ["UITurnEvent", () => UITurnEvent.UITurnEvent]
]

// schemas the decoder changes, or whose filters read a whole struct
const changingEntries: ReadonlyArray<Entry> = [
  ["a transformation in a field", () => Schema.Struct({ n: Schema.NumberFromString, s: Schema.String })],
  [
    "a transformation after a plain member",
    () =>
      Schema.Union([
        Schema.Struct({ type: Schema.Literal("a"), text: Schema.String }),
        Schema.Struct({ type: Schema.String }).pipe(
          Schema.decodeTo(
            Schema.Struct({ type: Schema.Literal("x"), name: Schema.String }),
            SchemaTransformation.transform({
              decode: ({ type }) => ({ type: "x" as const, name: type }),
              encode: ({ name }) => ({ type: name })
            })
          )
        )
      ])
  ],
  [
    "a filter over a struct",
    () =>
      Schema.Struct({ a: optional(Schema.NullOr(Schema.String)), b: optional(Schema.NullOr(Schema.Number)) }).check(
        Schema.makeFilter((value) => Object.keys(value).length > 1 || "two fields")
      )
  ],
  ["a class", () => Schema.Struct({ at: Schema.DateFromString, tags: Schema.Array(Schema.Trim) })],
  [
    "a tagged union whose transforming member comes first for some tags",
    () =>
      Schema.Union([
        Schema.Struct({ type: Schema.Literal("text"), text: Schema.String }),
        Schema.Struct({ type: Schema.Literal("n"), n: Schema.NumberFromString }),
        Schema.Struct({ type: Schema.Literals(["n", "m"]), n: Schema.String }),
        Schema.Struct({ type: Schema.String, value: optional(Schema.Number) })
      ])
  ],
  [
    "a default for a missing key",
    () =>
      Schema.Struct({
        a: Schema.String,
        b: Schema.Number.pipe(Schema.withDecodingDefaultKey(Effect.succeed(1)))
      })
  ],
  ["a declaration with type parameters", () => Schema.Struct({ values: Schema.ReadonlySet(Schema.Number) })],
  ["StreamEvent (a filter over the envelope)", () => StreamEvent.StreamEvent],
  [
    // Effect 3 wrote this one with the parse option `onExcessProperty: "error"`; an Effect 4 schema cannot carry
    // parse options, so the same check is a declaration whose decoder rejects any key but `a`
    "no excess properties (Effect 3: parse options)",
    () =>
      Schema.declare(
        (u): u is { readonly a: string } =>
          typeof u === "object" && u !== null && !Array.isArray(u) && Object.keys(u).every((key) => key === "a") &&
          "a" in u && typeof u.a === "string",
        {
          toCodecArbitrary: () =>
            Schema.link<{ readonly a: string }>()(Schema.Struct({ a: Schema.String }), {
              decode: SchemaGetter.transform((value) => value),
              encode: SchemaGetter.transform((value) => value)
            })
        }
      )
  ]
]

const plain: ReadonlyArray<readonly [string, AnySchema]> = plainEntries.map(([name, make]) => [name, make()])
const changing: ReadonlyArray<readonly [string, AnySchema]> = changingEntries.map(([name, make]) => [name, make()])

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

const inputs = (schema: AnySchema): FastCheck.Arbitrary<unknown> => {
  const encoded = fromSchema(Schema.toEncoded(schema))
  const typed = fromSchema(Schema.toType(schema))
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
      const decode = Schema.decodeUnknownExit(schema)
      const guard = SchemaGuard.decodesToItself(schema)
      FastCheck.assert(
        FastCheck.property(inputs(schema), (u) => {
          if (!guard(u)) return true
          const decoded = decode(u)
          return Exit.isSuccess(decoded) && isProjectionOf(decoded.value, u)
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
    const decode = Schema.decodeUnknownExit(StreamEvent.StreamEvent)
    const valid = Schema.is(StreamEvent.StreamEvent)
    FastCheck.assert(
      FastCheck.property(inputs(StreamEvent.StreamEvent), (u) => {
        const passes = StreamEvent.decodesToItself(u)
        if (!passes) return tryIs(valid, u) !== true
        const decoded = decode(u)
        return Exit.isSuccess(decoded) && isProjectionOf(decoded.value, u)
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

  // Effect compiles each guarded schema's parser to JavaScript (SchemaJITCompiler) and keeps its interpreter
  // wherever it cannot: the compiled parser of every schema here must answer as the interpreter does. A second
  // copy of the schema, made by its function and never guarded, is interpreted (the schemas of `src` share
  // their nodes, so only their top nodes are).
  for (const [name, make] of [...plainEntries, ...changingEntries]) {
    it(`compiled and interpreted parsers give the same verdicts: ${name}`, () => {
      const schema = make()
      const twin = make()
      const compiledIs = SchemaGuard.is(schema)
      const compiledDecode = SchemaGuard.decodesToItself(schema)
      const compiledExit = Schema.decodeUnknownExit(schema)
      const interpretedIs = Schema.is(twin)
      const interpretedExit = Schema.decodeUnknownExit(twin)
      const verdict = (exit: () => Exit.Exit<unknown, unknown>): string => {
        try {
          const result = exit()
          return Exit.isSuccess(result) ? "success" : "failure"
        } catch {
          return "throws"
        }
      }
      FastCheck.assert(
        FastCheck.property(
          inputs(schema),
          (u) =>
            outcome((v) => (compiledIs(v) ? 1 : 0), u) === outcome((v) => (tryIs(interpretedIs, v) ? 1 : 0), u) &&
            verdict(() => compiledExit(u)) === verdict(() => interpretedExit(u)) &&
            (!compiledDecode(u) || verdict(() => interpretedExit(u)) === "success")
        ),
        runs
      )
    }, 60_000)
  }

  it("a guard without generated source (a runtime that forbids Function) still agrees with Schema.is", () => {
    const expected = Schema.is(Delta)
    const input = inputs(Delta)
    const Function = globalThis.Function
    // what a runtime with `new Function` turned off does: Effect's compiler keeps the interpreter
    globalThis.Function = new Proxy(Function, {
      apply: () => {
        throw new EvalError("code generation from strings disallowed")
      },
      construct: () => {
        throw new EvalError("code generation from strings disallowed")
      }
    })
    try {
      const check = SchemaGuard.is(makeDelta())
      FastCheck.assert(
        FastCheck.property(input, (u) => [check(u), undefined].includes(tryIs(expected, u))),
        runs
      )
    } finally {
      globalThis.Function = Function
    }
  }, 60_000)

  it("a symbol-named or inherited property is read as the decoder reads it", () => {
    const key = Symbol.for("test/key")
    const schema = Schema.Struct({ [key]: Schema.String, text: optional(Schema.String) })
    const guard = SchemaGuard.is(schema)
    expect(guard({ [key]: "a" })).toBe(true)
    expect(guard({ [key]: 1 })).toBe(false)
    expect(guard({ text: "a" })).toBe(false)
    // Effect 4 reads an inherited `text` as the struct's (Effect 3 took the field to be missing): the guard
    // reads it as Schema.is and the decoder do
    const inherited = Object.assign(Object.create({ text: 1 }), { [key]: "a" })
    expect(Schema.is(schema)(inherited)).toBe(false)
    expect(Exit.isFailure(Schema.decodeUnknownExit(schema)(inherited))).toBe(true)
    expect(guard(inherited)).toBe(false)
    expect(guard(Object.assign(Object.create({ text: "b" }), { [key]: "a" }))).toBe(true)
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

  it("an inherited field is the decoder's to copy: decodesToItself leaves it to the decoder", () => {
    const schema = Schema.Struct({ text: Schema.String, n: optional(Schema.Number) })
    const inherited = Object.assign(Object.create({ text: "a" }), { n: 1 })
    expect(Schema.is(schema)(inherited)).toBe(true)
    expect(SchemaGuard.is(schema)(inherited)).toBe(true)
    expect(SchemaGuard.decodesToItself(schema)(inherited)).toBe(false)
    expect(SchemaGuard.decodesToItself(schema)({ text: "a", n: 1 })).toBe(true)
    const own = JSON.parse("{\"__proto__\": \"x\", \"text\": \"a\"}")
    const withProto = Schema.Struct({ ["__proto__"]: Schema.String, text: Schema.String })
    expect(SchemaGuard.is(withProto)(own)).toBe(Schema.is(withProto)(own))
    expect(SchemaGuard.decodesToItself(withProto)(own)).toBe(true)
    expect(SchemaGuard.is(withProto)({ text: "a" })).toBe(false)
  })

  it("a member the decoder would transform stops the search only for the tags it takes", () => {
    const schema = Schema.Union([
      Schema.Struct({ type: Schema.Literal("n"), n: Schema.NumberFromString }),
      Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })
    ])
    const guard = SchemaGuard.decodesToItself(schema)
    expect(guard({ type: "text", text: "hi" })).toBe(true)
    expect(guard({ type: "n", n: "1" })).toBe(false)
    expect(guard({ type: "text", text: 1 })).toBe(false)
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
