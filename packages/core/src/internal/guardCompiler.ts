/**
 * The compiler behind `SchemaGuard`: a schema's AST into a check that answers FAIL,
 * PASS or UNKNOWN per value (see `SchemaGuard` for what each guard promises).
 *
 * @internal
 */
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import { generate } from "./guardCode.js"

/** A compiled node answers one of three things. @internal */
export const FAIL = 0 // the value is not valid
/** @internal */
export const PASS = 1 // the value is valid, and decoding it gives it back as it is
/** @internal */
export const UNKNOWN = 2 // only the decoder can tell (a transformation, a declaration that copies)
/** @internal */
export type Verdict = typeof FAIL | typeof PASS | typeof UNKNOWN
/** @internal */
export type Check = (u: unknown) => Verdict

/**
 * How a schema is checked. `is` answers `Schema.is` (the type side, missing keys
 * rejected as `exact: true` does); `decode` answers for the decoder, which reads the
 * encoded side and gives a missing key the value `undefined`.
 */
export type Mode = "is" | "decode"

/** The key of `SchemaGuard.PredicateAnnotationId`. @internal */
export const PredicateAnnotationId: unique symbol = Symbol.for("@sluice/core/SchemaGuard/Predicate")

const predicateOf = (ast: AST.Declaration): ((u: unknown) => boolean) | undefined => {
  const predicate = ast.annotations[PredicateAnnotationId]
  return ast.typeParameters.length === 0 && typeof predicate === "function"
    ? (predicate as (u: unknown) => boolean)
    : undefined
}

const hasOwn = Object.prototype.hasOwnProperty
const isOptions: AST.ParseOptions = { exact: true }
const decodeOptions: AST.ParseOptions = {}

const verdictOf = (u: unknown, result: unknown): Verdict => {
  if (!Either.isEither(result)) return UNKNOWN
  if (Either.isLeft(result)) return FAIL
  return result.right === u ? PASS : UNKNOWN
}

/** Whether this runtime lets a guard be compiled to JavaScript source. */
const canGenerate: boolean = (() => {
  try {
    return new Function("return true")() === true
  } catch {
    return false
  }
})()

/** Whether the decoder may accept `undefined` for this node (a missing required key). */
const mayAcceptUndefined = (ast: AST.AST): boolean => {
  switch (ast._tag) {
    case "Literal":
    case "UniqueSymbol":
    case "NeverKeyword":
    case "StringKeyword":
    case "NumberKeyword":
    case "BooleanKeyword":
    case "BigIntKeyword":
    case "SymbolKeyword":
    case "ObjectKeyword":
    case "Enums":
    case "TemplateLiteral":
    case "TypeLiteral":
    case "TupleType":
      return false
    case "Union":
      return ast.types.some(mayAcceptUndefined)
    case "Refinement":
      return mayAcceptUndefined(ast.from)
    default:
      return true
  }
}

/**
 * Whether parsing may hand a refinement's filter something other than the value as it
 * arrived: a struct drops the properties it does not name, a declaration with type
 * parameters or a transformation builds a new value. Conservative for suspended schemas.
 */
const mayCopy = (ast: AST.AST): boolean => {
  switch (ast._tag) {
    case "TypeLiteral":
    case "Suspend":
    case "Transformation":
      return true
    case "Declaration":
      return ast.typeParameters.length > 0
    case "TupleType":
      return ast.elements.some((e) => mayCopy(e.type)) || ast.rest.some((r) => mayCopy(r.type))
    case "Union":
      return ast.types.some(mayCopy)
    case "Refinement":
      return mayCopy(ast.from)
    default:
      return false
  }
}

/** Whether some node, down to the leaves and through suspended schemas, changes how its subtree parses. */
/** @internal */
export const hasParseAnnotations = (root: AST.AST): boolean => {
  const seen = new Set<AST.AST>()
  const visit = (ast: AST.AST): boolean => {
    if (seen.has(ast)) return false
    seen.add(ast)
    if (Option.isSome(AST.getParseOptionsAnnotation(ast)) || Option.isSome(AST.getDecodingFallbackAnnotation(ast))) {
      return true
    }
    switch (ast._tag) {
      case "Declaration":
        return ast.typeParameters.some(visit)
      case "TypeLiteral":
        return ast.propertySignatures.some((ps) => visit(ps.type)) ||
          ast.indexSignatures.some((is) => visit(is.parameter) || visit(is.type))
      case "TupleType":
        return ast.elements.some((e) => visit(e.type)) || ast.rest.some((r) => visit(r.type))
      case "Union":
        return ast.types.some(visit)
      case "Refinement":
        return visit(ast.from)
      case "Suspend":
        return visit(ast.f())
      case "Transformation":
        return visit(ast.from) || visit(ast.to)
      default:
        return false
    }
  }
  return visit(root)
}

/** The required literal properties of a union member, as the decoder's search reads them. */
const literalsOf = (ast: AST.AST, mode: Mode): ReadonlyArray<readonly [PropertyKey, AST.Literal]> => {
  switch (ast._tag) {
    case "Declaration": {
      const surrogate = AST.getSurrogateAnnotation(ast)
      return Option.isSome(surrogate) ? literalsOf(surrogate.value, mode) : []
    }
    case "TypeLiteral": {
      const out: Array<readonly [PropertyKey, AST.Literal]> = []
      for (const ps of ast.propertySignatures) {
        const type = mode === "decode" ? AST.encodedAST(ps.type) : AST.typeAST(ps.type)
        if (AST.isLiteral(type) && !ps.isOptional) out.push([ps.name, type])
      }
      return out
    }
    case "TupleType": {
      const out: Array<readonly [PropertyKey, AST.Literal]> = []
      ast.elements.forEach((element, index) => {
        const type = mode === "decode" ? AST.encodedAST(element.type) : AST.typeAST(element.type)
        if (AST.isLiteral(type) && !element.isOptional) out.push([index, type])
      })
      return out
    }
    case "Refinement":
      return literalsOf(ast.from, mode)
    case "Suspend":
      return literalsOf(ast.f(), mode)
    case "Transformation":
      return literalsOf(mode === "decode" ? ast.from : ast.to, mode)
    default:
      return []
  }
}

interface Discriminant {
  readonly key: PropertyKey
  readonly buckets: Map<string, Array<Check>>
}

/** @internal */
export class Compiler {
  private readonly memo = new Map<AST.AST, Check>()

  /**
   * `generated`: whether structs, arrays, unions of plain members and their leaves are
   * compiled to JavaScript source (one function per node, property reads the engine
   * can cache per shape) instead of closures. Off where the runtime forbids `Function`.
   */
  constructor(
    readonly mode: Mode,
    private readonly generated: boolean = canGenerate
  ) {}

  compile(ast: AST.AST): Check {
    const known = this.memo.get(ast)
    if (known !== undefined) return known
    const check = this.build(ast)
    this.memo.set(ast, check)
    return check
  }

  /**
   * Whether a node is compiled to source: structs, tuples and arrays, unions without
   * literal properties (the search by literal stays a closure), refinements whose
   * filter sees the value as it arrived.
   */
  generates(ast: AST.AST): boolean {
    switch (ast._tag) {
      case "TypeLiteral":
        return true
      case "TupleType":
        return ast.rest.length <= 1
      case "Union":
        return ast.types.every((member) => literalsOf(member, this.mode).length === 0)
      case "Refinement":
        return !mayCopy(ast.from)
      default:
        return false
    }
  }

  /**
   * The answer of `effect/ParseResult` for one node. Where it throws (a few values
   * make it), a guard says "no" and the decode guard leaves the value to the decoder.
   */
  private delegate(ast: AST.AST): Check {
    if (this.mode === "decode") {
      const decode = ParseResult.decodeUnknownEither(Schema.make(ast))
      return (u) => {
        try {
          return verdictOf(u, decode(u))
        } catch {
          return UNKNOWN
        }
      }
    }
    const is = ParseResult.is(Schema.make(ast))
    return (u) => {
      try {
        return is(u) ? PASS : FAIL
      } catch {
        return FAIL
      }
    }
  }

  private build(ast: AST.AST): Check {
    if (this.generated && this.generates(ast)) return generate(ast, this)
    switch (ast._tag) {
      case "Literal": {
        const literal = ast.literal
        return (u) => (u === literal ? PASS : FAIL)
      }
      case "UniqueSymbol": {
        const symbol = ast.symbol
        return (u) => (u === symbol ? PASS : FAIL)
      }
      case "UndefinedKeyword":
        return (u) => (u === undefined ? PASS : FAIL)
      case "NeverKeyword":
        return () => FAIL
      case "UnknownKeyword":
      case "AnyKeyword":
      case "VoidKeyword":
        return () => PASS
      case "StringKeyword":
        return (u) => (typeof u === "string" ? PASS : FAIL)
      case "NumberKeyword":
        return (u) => (typeof u === "number" ? PASS : FAIL)
      case "BooleanKeyword":
        return (u) => (typeof u === "boolean" ? PASS : FAIL)
      case "BigIntKeyword":
        return (u) => (typeof u === "bigint" ? PASS : FAIL)
      case "SymbolKeyword":
        return (u) => (typeof u === "symbol" ? PASS : FAIL)
      case "ObjectKeyword":
        return (u) => ((typeof u === "object" && u !== null) || typeof u === "function" ? PASS : FAIL)
      case "Enums": {
        const values = ast.enums.map(([, value]) => value)
        return (u) => (values.some((value) => value === u) ? PASS : FAIL)
      }
      case "TemplateLiteral":
        return this.delegate(ast)
      case "Refinement":
        return this.refinement(ast)
      case "TypeLiteral":
        return this.typeLiteral(ast)
      case "TupleType":
        return this.tuple(ast)
      case "Union":
        return this.union(ast)
      case "Suspend": {
        let target: Check | undefined
        return (u) => (target ??= this.compile(ast.f()))(u)
      }
      case "Declaration":
        return this.declaration(ast)
      case "Transformation":
        // the decoder builds a new value; `Schema.is` reads the type side
        return this.mode === "decode" ? () => UNKNOWN : this.compile(ast.to)
    }
  }

  private refinement(ast: AST.Refinement): Check {
    // the filter must see what the parser would give it: only the parser can say
    // whether a filter over a struct holds for the struct without its extra properties
    if (mayCopy(ast.from)) return this.delegate(ast)
    const from = this.compile(ast.from)
    const filter = this.filter(ast)
    return (u) => {
      const verdict = from(u)
      if (verdict !== PASS) return verdict
      return filter(u) ? PASS : FAIL
    }
  }

  private declaration(ast: AST.Declaration): Check {
    const predicate = predicateOf(ast)
    if (predicate !== undefined) return (u) => (predicate(u) ? PASS : FAIL)
    if (this.mode === "decode" && ast.typeParameters.length > 0) return () => UNKNOWN
    // `Schema.is` parses a declaration's type parameters by their type side
    const typed = this.mode === "is" ? AST.typeAST(ast) : ast
    if (!AST.isDeclaration(typed)) return this.delegate(ast)
    const parse = typed.decodeUnknown(...typed.typeParameters)
    const options = this.mode === "is" ? isOptions : decodeOptions
    const fallback: Check = this.mode === "is" ? this.delegate(ast) : () => UNKNOWN
    return (u): Verdict => {
      const result = parse(u, options, typed)
      if (!Either.isEither(result)) return fallback(u)
      if (Either.isLeft(result)) return FAIL
      // `Schema.is` only asks whether it parses; the decoder must give the value back
      return this.mode === "is" || result.right === u ? PASS : UNKNOWN
    }
  }

  private typeLiteral(ast: AST.TypeLiteral): Check {
    if (ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0) {
      return (u) => (u !== null && u !== undefined ? PASS : FAIL)
    }
    const names = ast.propertySignatures.map((ps) => ps.name)
    const checks = ast.propertySignatures.map((ps) => this.compile(ps.type))
    // a missing key: skipped when optional; `Schema.is` rejects it; the decoder reads
    // `undefined`, and a type that may accept it is the decoder's to judge
    const missing: Array<Verdict> = ast.propertySignatures.map((ps) => this.missing(ps))
    const indexes = this.indexSignatures(ast)
    const count = names.length
    return (u) => {
      if (typeof u !== "object" || u === null || Array.isArray(u)) return FAIL
      let result: Verdict = PASS
      for (let i = 0; i < count; i++) {
        const name = names[i]!
        let verdict: Verdict
        if (hasOwn.call(u, name)) verdict = checks[i]!((u as Record<PropertyKey, unknown>)[name])
        else verdict = missing[i]!
        if (verdict === FAIL) return FAIL
        if (verdict === UNKNOWN) result = UNKNOWN
      }
      if (indexes === undefined) return result
      const verdict = indexes(u)
      return verdict === PASS ? result : verdict
    }
  }

  /**
   * The verdict for a missing key: skipped when optional; `Schema.is` rejects it; the
   * decoder reads `undefined`, and a type that may accept it is the decoder's to judge.
   */
  missing(ps: AST.PropertySignature): Verdict {
    return ps.isOptional ? PASS : this.mode === "is" || !mayAcceptUndefined(ps.type) ? FAIL : UNKNOWN
  }

  /** The check of a struct's index signatures over an object, or `undefined` when it has none. */
  indexSignatures(ast: AST.TypeLiteral): Check | undefined {
    if (ast.indexSignatures.length === 0) return undefined
    const indexes = ast.indexSignatures.map((is) => ({
      symbols: keyKind(is.parameter) === "symbol",
      parameter: this.compile(is.parameter),
      type: this.compile(is.type)
    }))
    return (u) => {
      let result: Verdict = PASS
      for (const index of indexes) {
        const keys: ReadonlyArray<PropertyKey> = index.symbols
          ? Object.getOwnPropertySymbols(u)
          : Object.keys(u as object)
        for (const key of keys) {
          const keyVerdict = index.parameter(key)
          if (keyVerdict === UNKNOWN) return UNKNOWN
          if (keyVerdict === FAIL) continue
          const verdict = index.type((u as Record<PropertyKey, unknown>)[key])
          if (verdict === FAIL) return FAIL
          if (verdict === UNKNOWN) result = UNKNOWN
        }
      }
      return result
    }
  }

  /** What a refinement's filter answers for a value its `from` side passed. */
  filter(ast: AST.Refinement): (u: unknown) => boolean {
    const options = this.mode === "is" ? isOptions : decodeOptions
    return (u) => Option.isNone(ast.filter(u, options, ast))
  }

  private tuple(ast: AST.TupleType): Check {
    if (ast.rest.length > 1) return this.delegate(ast)
    const elements = ast.elements.map((e) => this.compile(e.type))
    const optional = ast.elements.map((e) => e.isOptional)
    const required = ast.elements.filter((e) => !e.isOptional).length
    const rest = ast.rest.length === 1 ? this.compile(ast.rest[0]!.type) : undefined
    const count = elements.length
    return (u) => {
      if (!Array.isArray(u)) return FAIL
      const length = u.length
      if (length < required) return FAIL
      if (rest === undefined && length > count) return FAIL
      let result: Verdict = PASS
      for (let i = 0; i < count; i++) {
        if (i >= length && optional[i]) continue
        const verdict = elements[i]!(u[i])
        if (verdict === FAIL) return FAIL
        if (verdict === UNKNOWN) result = UNKNOWN
      }
      if (rest !== undefined) {
        for (let i = count; i < length; i++) {
          const verdict = rest(u[i])
          if (verdict === FAIL) return FAIL
          if (verdict === UNKNOWN) result = UNKNOWN
        }
      }
      return result
    }
  }

  /**
   * A union tries its members in the decoder's order: the members whose literal
   * property matches the value's, then the members without one. The first member that
   * passes answers; a member only the decoder can judge stops the search, since the
   * decoder would take its result if it succeeds.
   */
  private union(ast: AST.Union): Check {
    const discriminants: Array<Discriminant> = []
    const otherwise: Array<Check> = []
    for (const member of ast.types) {
      const tags = literalsOf(member, this.mode)
      if (tags.length === 0) {
        otherwise.push(this.compile(member))
        continue
      }
      for (let j = 0; j < tags.length; j++) {
        const [name, literal] = tags[j]!
        const key = typeof name === "symbol" ? name : String(name)
        const hash = String(literal.literal)
        let discriminant = discriminants.find((d) => d.key === key)
        if (discriminant === undefined) {
          discriminant = { key, buckets: new Map() }
          discriminants.push(discriminant)
        }
        const bucket = discriminant.buckets.get(hash)
        if (bucket === undefined) {
          discriminant.buckets.set(hash, [this.compile(member)])
          break
        }
        if (j < tags.length - 1) continue
        bucket.push(this.compile(member))
      }
    }
    // the decoder reads the literal properties in its own key order: index-like keys
    // ascending, then names as they were met, then symbols
    discriminants.sort((a, b) =>
      keyRank(a.key) - keyRank(b.key) || (isIndexKey(a.key) && isIndexKey(b.key) ? Number(a.key) - Number(b.key) : 0)
    )
    return (u) => {
      if (discriminants.length > 0 && typeof u === "object" && u !== null) {
        for (const { buckets, key } of discriminants) {
          if (!hasOwn.call(u, key)) continue
          const value = (u as Record<PropertyKey, unknown>)[key]
          // no object equals a literal (and `String` of one may throw)
          if ((typeof value === "object" && value !== null) || typeof value === "function") continue
          const bucket = buckets.get(String(value))
          if (bucket === undefined) continue
          for (const member of bucket) {
            const verdict = member(u)
            if (verdict !== FAIL) return verdict
          }
        }
      }
      for (const member of otherwise) {
        const verdict = member(u)
        if (verdict !== FAIL) return verdict
      }
      return FAIL
    }
  }
}

const isIndexKey = (key: PropertyKey): boolean =>
  typeof key === "string" && /^(0|[1-9][0-9]*)$/.test(key) && Number(key) < 4294967295

const keyRank = (key: PropertyKey): number => (typeof key === "symbol" ? 2 : isIndexKey(key) ? 0 : 1)

const keyKind = (parameter: AST.AST): "string" | "symbol" =>
  parameter._tag === "SymbolKeyword" ? "symbol" : parameter._tag === "Refinement" ? keyKind(parameter.from) : "string"
