/**
 * The compiler behind `SchemaGuard`: a schema's AST (`effect/SchemaAST`) into a check
 * that answers FAIL, PASS or UNKNOWN per value, compiled to JavaScript source: one
 * function per struct, array, union, with keywords, literals and the properties of a
 * struct read inline (property reads the engine caches per object shape).
 *
 * The compiled checks follow `effect/SchemaParser` node by node: a struct reads a
 * property as `key in input`, except that a key named like a member of
 * `Object.prototype` (`constructor`, `toString`, `__proto__`, ...) counts only as an own
 * property (effect 4.1.5 and later), a missing key passes only where
 * the property is optional, a record (string keys) reads `Object.keys`, an array every
 * index, a union tries its members in order and the first that passes answers (the
 * parser's candidate search only skips members that would fail), a node's filters run
 * on the value it passed. Nodes a check cannot follow exactly (filters over a struct,
 * an array or a union, which read the parser's copy; tuples, enums, template
 * literals, declarations without `PredicateAnnotationId`, `oneOf` unions, encoding
 * checks) are handed to `effect/SchemaParser` itself, so the answer never differs.
 *
 * @internal
 */
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"

/** The value is not valid. @internal */
export const FAIL = 0
/** The value is valid, and decoding it gives it back as it is. @internal */
export const PASS = 1
/** Only the decoder can tell (a transformation, a declaration that copies). @internal */
export const UNKNOWN = 2
/** @internal */
export type Verdict = typeof FAIL | typeof PASS | typeof UNKNOWN
/** @internal */
export type Check = (u: unknown) => Verdict

/**
 * How a schema is checked. `is` answers `Schema.is` (the type side); `decode` answers
 * for the decoder (the encoded side), UNKNOWN where a transformation would run.
 *
 * @internal
 */
export type Mode = "is" | "decode"

/** The key of `SchemaGuard.PredicateAnnotationId`. @internal */
export const PredicateAnnotationId: unique symbol = Symbol.for("@sluice/core/SchemaGuard/Predicate")

// the annotation by which a declaration tells a union's candidate search its literal fields
const sentinelsKey = "~sentinels"

const predicateOf = (ast: AST.Declaration): ((u: unknown) => boolean) | undefined => {
  if (ast.typeParameters.length > 0 || ast.encodingRun !== undefined || ast.annotations === undefined) return undefined
  const predicate: unknown = Reflect.get(ast.annotations, PredicateAnnotationId)
  return typeof predicate === "function" ? (u) => Boolean(Reflect.apply(predicate, undefined, [u])) : undefined
}

const encodingChecksOf = (ast: AST.AST): AST.Checks | undefined =>
  AST.isObjects(ast) || AST.isArrays(ast) || AST.isUnion(ast) || AST.isDeclaration(ast)
    ? ast.encodingChecks
    : undefined

const parseOptions: AST.ParseOptions = {}

/** Whether every filter passes, as the parser runs them (the first issue stops). */
const checksPass = (checks: ReadonlyArray<AST.Check<unknown>>, value: unknown, ast: AST.AST): boolean => {
  for (const check of checks) {
    if (check._tag === "FilterGroup") {
      if (!checksPass(check.checks, value, ast)) return false
    } else if (check.run(value, ast, parseOptions) !== undefined) return false
  }
  return true
}

const isPlainObject = (value: object): boolean => {
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/**
 * Whether a decoded value is the input as it arrived: the same leaves and objects,
 * arrays and plain objects rebuilt with some of the input's own properties left out.
 *
 * @internal
 */
export const isInputAsIs = (decoded: unknown, input: unknown): boolean => {
  if (Object.is(decoded, input)) return true
  if (typeof decoded !== "object" || decoded === null) return false
  if (typeof input !== "object" || input === null) return false
  if (Array.isArray(decoded)) {
    if (!Array.isArray(input) || decoded.length !== input.length) return false
    for (let i = 0; i < decoded.length; i++) if (!isInputAsIs(decoded[i], input[i])) return false
    return true
  }
  if (Array.isArray(input) || !isPlainObject(decoded) || !isPlainObject(input)) return false
  for (const key of Reflect.ownKeys(decoded)) {
    if (!Object.prototype.hasOwnProperty.call(input, key)) return false
    if (!isInputAsIs(Reflect.get(decoded, key), Reflect.get(input, key))) return false
  }
  return true
}

/** The names of `Object.prototype`'s members, and `__proto__`: a struct's key named so counts only as an own property. */
const prototypeKeys = new Set<PropertyKey>(Reflect.ownKeys(Object.prototype)).add("__proto__")

/** Whether a struct's key must be an own property of the input to count as present (effect/SchemaParser's rule). */
const requiresOwnProperty = (key: PropertyKey): boolean =>
  prototypeKeys.has(typeof key === "number" ? String(key) : key)

/** Whether the decoder may give a missing key a value: a transformation at the key's node. */
const mayFillMissing = (ast: AST.AST): boolean => ast.encoding !== undefined || AST.isSuspend(ast)

/** How a node is checked. */
type Kind = "leaf" | "objects" | "array" | "union" | "suspend" | "delegate" | "unknown"

/** The source of a literal compared with `===`, when it has one. */
const literalSource = (literal: AST.Literal["literal"]): string | undefined => {
  switch (typeof literal) {
    case "string":
      return JSON.stringify(literal)
    case "boolean":
      return String(literal)
    case "number":
      return Number.isFinite(literal) ? String(literal) : undefined
    case "bigint":
      return `${literal}n`
  }
}

/** The required literal property at `key` of a union member, as the member checks it. */
const literalAt = (ast: AST.AST, key: PropertyKey): AST.Literal | undefined => {
  if (!AST.isObjects(ast)) return undefined
  const ps = ast.propertySignatures.find((p) => p.name === key)
  if (ps === undefined) return undefined
  const type = ps.type
  return AST.isLiteral(type) && !AST.isOptional(type) && type.checks === undefined && type.encoding === undefined &&
      literalSource(type.literal) !== undefined
    ? type
    : undefined
}

/** @internal */
export class Compiler {
  private readonly memo = new Map<AST.AST, Check>()

  constructor(readonly mode: Mode) {}

  kind(ast: AST.AST): Kind {
    if (this.mode === "decode" && ast.encoding !== undefined) return "unknown"
    if (encodingChecksOf(ast) !== undefined) return "delegate"
    switch (ast._tag) {
      case "Null":
      case "Undefined":
      case "Never":
      case "Unknown":
      case "Any":
      case "String":
      case "Number":
      case "Boolean":
      case "BigInt":
      case "Symbol":
      case "ObjectKeyword":
      case "UniqueSymbol":
      case "Literal":
        return "leaf"
      case "Declaration":
        return predicateOf(ast) === undefined ? "delegate" : "leaf"
      case "Objects":
        return ast.checks === undefined && ast.indexSignatures.every((is) => is.parameter === AST.string)
          ? "objects"
          : "delegate"
      case "Arrays":
        return ast.checks === undefined && ast.elements.length === 0 && ast.rest.length === 1 ? "array" : "delegate"
      case "Union":
        return ast.checks === undefined && ast.options?.mode !== "oneOf" &&
            ast.types.every((member) =>
              !AST.isDeclaration(member) || member.annotations === undefined ||
              !Object.prototype.hasOwnProperty.call(member.annotations, sentinelsKey)
            )
          ? "union"
          : "delegate"
      case "Suspend":
        return ast.checks === undefined ? "suspend" : "delegate"
      default:
        return "delegate"
    }
  }

  /** The compiled check of a node, made once. */
  compile(ast: AST.AST): Check {
    const known = this.memo.get(ast)
    if (known !== undefined) return known
    const check = generate(ast, this)
    this.memo.set(ast, check)
    return check
  }

  /**
   * The answer of `effect/SchemaParser` for one node. A parser that throws (or dies)
   * throws here too: `SchemaGuard` answers "no" for the whole value, as `Schema.is`
   * throws for it and the decoder fails.
   */
  delegate(ast: AST.AST): Check {
    const schema = Schema.make<Schema.Codec<unknown>>(ast)
    if (this.mode === "is") {
      const is = Schema.is(schema)
      return (u) => (is(u) ? PASS : FAIL)
    }
    const decode = Schema.decodeUnknownExit(schema)
    return (u) => {
      const exit = decode(u)
      if (Exit.isSuccess(exit)) return isInputAsIs(exit.value, u) ? PASS : UNKNOWN
      return exit.cause.reasons.every((reason) => reason._tag === "Fail") ? FAIL : UNKNOWN
    }
  }

  /** The verdict for a missing key. */
  missing(type: AST.AST): Verdict {
    if (this.mode === "decode" && mayFillMissing(type)) return UNKNOWN
    return AST.isOptional(type) ? PASS : FAIL
  }

  /** A leaf node's own test (without filters), as a function. */
  leafTest(ast: AST.AST): (u: unknown) => boolean {
    switch (ast._tag) {
      case "Declaration": {
        const predicate = predicateOf(ast)
        return predicate ?? (() => false)
      }
      case "Literal": {
        const literal = ast.literal
        return (u) => u === literal
      }
      case "UniqueSymbol": {
        const symbol = ast.symbol
        return (u) => u === symbol
      }
      default:
        return () => false
    }
  }

  /** The filters of a node, as a function of the value it passed. */
  filter(ast: AST.AST, checks: AST.Checks): (u: unknown) => boolean {
    return (u) => checksPass(checks, u, ast)
  }
}

/** A leaf without filters, as a boolean expression over the variable `v`, where it has one. */
const leafSource = (ast: AST.AST, v: string): string | undefined => {
  switch (ast._tag) {
    case "Literal": {
      const literal = literalSource(ast.literal)
      return literal === undefined ? undefined : `${v} === ${literal}`
    }
    case "Null":
      return `${v} === null`
    case "Undefined":
      return `${v} === undefined`
    case "Never":
      return "false"
    case "Unknown":
    case "Any":
      return "true"
    case "String":
      return `typeof ${v} === "string"`
    case "Number":
      return `typeof ${v} === "number"`
    case "Boolean":
      return `typeof ${v} === "boolean"`
    case "BigInt":
      return `typeof ${v} === "bigint"`
    case "Symbol":
      return `typeof ${v} === "symbol"`
    case "ObjectKeyword":
      return `((typeof ${v} === "object" && ${v} !== null) || typeof ${v} === "function")`
    default:
      return undefined
  }
}

class Generator {
  private readonly functions: Array<string> = []
  private readonly names = new Map<AST.AST, string>()
  readonly externals: Array<unknown> = []

  constructor(private readonly compiler: Compiler) {}

  /** A value the source reads from the externals array. */
  private external(value: unknown): string {
    this.externals.push(value)
    return `x[${this.externals.length - 1}]`
  }

  /** A boolean expression over `v` for a leaf node with its filters. */
  private leaf(ast: AST.AST, v: string): string {
    const own = leafSource(ast, v) ?? `${this.external(this.compiler.leafTest(ast))}(${v})`
    return ast.checks === undefined ? own : `(${own} && ${this.external(this.compiler.filter(ast, ast.checks))}(${v}))`
  }

  /** The name of the function that checks a node, generating it the first time. */
  name(ast: AST.AST): string {
    const known = this.names.get(ast)
    if (known !== undefined) return known
    const kind = this.compiler.kind(ast)
    let name: string
    switch (kind) {
      case "objects":
      case "array":
      case "union":
      case "leaf": {
        name = `n${this.functions.length}`
        this.functions.push("")
        this.names.set(ast, name)
        this.functions[Number(name.slice(1))] = `function ${name}(u) {\n${this.body(ast, kind)}\n}`
        return name
      }
      case "suspend": {
        const compiler = this.compiler
        const suspend = ast as AST.Suspend
        let target: Check | undefined
        name = this.external((u: unknown) => (target ??= compiler.compile(suspend.thunk()))(u))
        break
      }
      case "unknown":
        name = this.external(() => UNKNOWN)
        break
      case "delegate":
        name = this.external(this.compiler.delegate(ast))
        break
    }
    this.names.set(ast, name)
    return name
  }

  /** Statements folding the verdict of a node over `w` into `r`, or returning FAIL. */
  private fold(ast: AST.AST): string {
    if (this.compiler.kind(ast) === "leaf") return `if (!(${this.leaf(ast, "w")})) return 0;`
    return `v = ${this.name(ast)}(w); if (v === 0) return 0; if (v === 2) r = 2;`
  }

  private body(ast: AST.AST, kind: Kind): string {
    switch (kind) {
      case "leaf":
        return `return ${this.leaf(ast, "u")} ? 1 : 0;`
      case "objects":
        return this.objects(ast as AST.Objects)
      case "array":
        return this.array(ast as AST.Arrays)
      default:
        return this.union(ast as AST.Union)
    }
  }

  private objects(ast: AST.Objects): string {
    if (ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0) {
      return "return u !== null && u !== undefined ? 1 : 0;"
    }
    const decode = this.compiler.mode === "decode"
    const lines = ["if (typeof u !== \"object\" || u === null || Array.isArray(u)) return 0;", "let r = 1, v, w;"]
    // the decoder copies an inherited value into its own object: only an own one is the input as it arrived
    if (decode && ast.propertySignatures.length > 0) lines.push("const p = Object.getPrototypeOf(u);")
    for (const ps of ast.propertySignatures) {
      const key = typeof ps.name === "string" ? JSON.stringify(ps.name) : this.external(ps.name)
      // the parser reads `key in input` (own only for Object.prototype's names); the decoder copies an inherited value
      const ownOnly = requiresOwnProperty(ps.name)
      const present = ownOnly ? `hasOwn.call(u, ${key})` : `${key} in u`
      const inherited = decode && !ownOnly
        ? `if (p !== null && ${key} in p && !hasOwn.call(u, ${key})) r = 2; `
        : ""
      const missing = this.compiler.missing(ps.type)
      const read = `if (${present}) { ${inherited}w = u[${key}]; ${this.fold(ps.type)} }`
      lines.push(missing === PASS ? read : `${read} else ${missing === FAIL ? "return 0;" : "r = 2;"}`)
    }
    if (ast.indexSignatures.length > 0) {
      lines.push("const keys = Object.keys(u);")
      for (const is of ast.indexSignatures) {
        lines.push(`for (let i = 0; i < keys.length; i++) { w = u[keys[i]]; ${this.fold(is.type)} }`)
      }
    }
    lines.push("return r;")
    return lines.join("\n")
  }

  private array(ast: AST.Arrays): string {
    return [
      "if (!Array.isArray(u)) return 0;",
      "let r = 1, v, w;",
      `for (let i = 0; i < u.length; i++) { w = u[i]; ${this.fold(ast.rest[0]!)} }`,
      "return r;"
    ].join("\n")
  }

  /**
   * The first member that does not fail answers. Members with a literal at the most
   * common literal key are only tried when the value has that literal there (the others
   * would fail on it), in the members' order.
   */
  private union(ast: AST.Union): string {
    const counts = new Map<PropertyKey, number>()
    for (const member of ast.types) {
      if (!AST.isObjects(member) || this.compiler.kind(member) !== "objects") continue
      for (const ps of member.propertySignatures) {
        if (literalAt(member, ps.name) !== undefined) counts.set(ps.name, (counts.get(ps.name) ?? 0) + 1)
      }
    }
    let tag: PropertyKey | undefined
    let most = 1
    for (const [key, count] of counts) {
      if (count > most) {
        tag = key
        most = count
      }
    }
    const lines = ["let v;"]
    if (tag !== undefined) {
      const key = typeof tag === "string" ? JSON.stringify(tag) : this.external(tag)
      const present = requiresOwnProperty(tag) ? `hasOwn.call(u, ${key})` : `${key} in u`
      lines.push(
        `const t = typeof u === "object" && u !== null && !Array.isArray(u) && ${present} ? u[${key}] : undefined;`
      )
    }
    for (const member of ast.types) {
      const literal = tag === undefined || this.compiler.kind(member) !== "objects"
        ? undefined
        : literalAt(member, tag)
      const guard = literal === undefined ? "" : `if (t === ${literalSource(literal.literal)}) `
      if (this.compiler.kind(member) === "leaf") {
        lines.push(`${guard}if (${this.leaf(member, "u")}) return 1;`)
      } else {
        lines.push(`${guard}{ v = ${this.name(member)}(u); if (v !== 0) return v; }`)
      }
    }
    lines.push("return 0;")
    return lines.join("\n")
  }

  source(root: string): string {
    return `"use strict";\n${this.functions.join("\n")}\nreturn ${root};`
  }
}

/**
 * Compiles a node to one JavaScript function, with the functions of the nodes under it;
 * the nodes it delegates are `effect/SchemaParser`'s, called from the source.
 */
const generate = (ast: AST.AST, compiler: Compiler): Check => {
  const generator = new Generator(compiler)
  const root = generator.name(ast)
  const make: unknown = new Function("hasOwn", "x", generator.source(root))
  return Reflect.apply(make as (...args: Array<unknown>) => unknown, undefined, [
    Object.prototype.hasOwnProperty,
    generator.externals
  ]) as Check
}
