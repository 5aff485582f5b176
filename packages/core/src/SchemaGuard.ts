/**
 * Guards compiled from a Schema's AST: the same answer as `Schema.is`, or as a
 * successful decode, without building a parse result per node. Made for the hot path of
 * wire decoding, where nearly every value is valid and is used as it arrived.
 *
 * The compiled checks follow `effect/ParseResult` node by node (property signatures
 * read as own keys, exact optional fields, index signatures, refinement filters, the
 * literal search of unions, tuples and arrays, suspended schemas, declarations).
 * Nodes a guard cannot follow exactly (a schema carrying parse options or a decoding
 * fallback, a template literal, a tuple with several rest elements) are handed to
 * `effect/ParseResult` itself, so the answer never differs.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"

// A compiled node answers one of three things.
const FAIL = 0 // the value is not valid
const PASS = 1 // the value is valid, and decoding it gives it back as it is
const UNKNOWN = 2 // only the decoder can tell (a transformation, a declaration that copies)
type Verdict = typeof FAIL | typeof PASS | typeof UNKNOWN
type Check = (u: unknown) => Verdict

/**
 * How a schema is checked. `is` answers `Schema.is` (the type side, missing keys
 * rejected as `exact: true` does); `decode` answers for the decoder, which reads the
 * encoded side and gives a missing key the value `undefined`.
 */
type Mode = "is" | "decode"

/**
 * An annotation for a declaration without type parameters (`Schema.declare(is)`): the
 * predicate its decoder applies, which returns the input unchanged when it holds. A
 * compiled guard calls it directly instead of the declaration's decoder.
 *
 * @since 0.1.0
 * @category annotations
 */
export const PredicateAnnotationId: unique symbol = Symbol.for("@sluice/core/SchemaGuard/Predicate")

const predicateOf = (ast: AST.Declaration): ((u: unknown) => boolean) | undefined => {
  const predicate = ast.annotations[PredicateAnnotationId]
  return ast.typeParameters.length === 0 && typeof predicate === "function" ? (predicate as (u: unknown) => boolean) : undefined
}

const hasOwn = Object.prototype.hasOwnProperty
const isOptions: AST.ParseOptions = { exact: true }
const decodeOptions: AST.ParseOptions = {}

const verdictOf = (u: unknown, result: unknown): Verdict => {
  if (!Either.isEither(result)) return UNKNOWN
  if (Either.isLeft(result)) return FAIL
  return result.right === u ? PASS : UNKNOWN
}

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
const hasParseAnnotations = (root: AST.AST): boolean => {
  const seen = new Set<AST.AST>()
  const visit = (ast: AST.AST): boolean => {
    if (seen.has(ast)) return false
    seen.add(ast)
    if (Option.isSome(AST.getParseOptionsAnnotation(ast)) || Option.isSome(AST.getDecodingFallbackAnnotation(ast))) return true
    switch (ast._tag) {
      case "Declaration":
        return ast.typeParameters.some(visit)
      case "TypeLiteral":
        return ast.propertySignatures.some((ps) => visit(ps.type)) || ast.indexSignatures.some((is) => visit(is.parameter) || visit(is.type))
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

class Compiler {
  private readonly memo = new Map<AST.AST, Check>()

  constructor(private readonly mode: Mode) {}

  compile(ast: AST.AST): Check {
    const known = this.memo.get(ast)
    if (known !== undefined) return known
    const check = this.build(ast)
    this.memo.set(ast, check)
    return check
  }

  /** The answer of `effect/ParseResult` for one node. */
  private delegate(ast: AST.AST): Check {
    if (this.mode === "decode") {
      const decode = ParseResult.decodeUnknownEither(Schema.make(ast))
      return (u) => verdictOf(u, decode(u))
    }
    const is = ParseResult.is(Schema.make(ast))
    return (u) => (is(u) ? PASS : FAIL)
  }

  private build(ast: AST.AST): Check {
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
    const options = this.mode === "is" ? isOptions : decodeOptions
    return (u) => {
      const verdict = from(u)
      if (verdict !== PASS) return verdict
      return Option.isNone(ast.filter(u, options, ast)) ? PASS : FAIL
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
    const missing: Array<Verdict> = ast.propertySignatures.map((ps) =>
      ps.isOptional ? PASS : this.mode === "is" || !mayAcceptUndefined(ps.type) ? FAIL : UNKNOWN
    )
    const indexes = ast.indexSignatures.map((is) => ({
      symbols: keyKind(is.parameter) === "symbol",
      parameter: this.compile(is.parameter),
      type: this.compile(is.type)
    }))
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
      for (const index of indexes) {
        const keys: ReadonlyArray<PropertyKey> = index.symbols ? Object.getOwnPropertySymbols(u) : Object.keys(u)
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
    discriminants.sort((a, b) => keyRank(a.key) - keyRank(b.key) || (isIndexKey(a.key) && isIndexKey(b.key) ? Number(a.key) - Number(b.key) : 0))
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

const isIndexKey = (key: PropertyKey): boolean => typeof key === "string" && /^(0|[1-9][0-9]*)$/.test(key) && Number(key) < 4294967295

const keyRank = (key: PropertyKey): number => (typeof key === "symbol" ? 2 : isIndexKey(key) ? 0 : 1)

const keyKind = (parameter: AST.AST): "string" | "symbol" =>
  parameter._tag === "SymbolKeyword" ? "symbol" : parameter._tag === "Refinement" ? keyKind(parameter.from) : "string"

/**
 * A guard that answers exactly as `Schema.is(schema)` does, compiled once from the
 * schema's type side. Extra properties are allowed, as `Schema.is` allows them.
 *
 * @since 0.1.0
 * @category guards
 */
export const is = <A, I, R>(schema: Schema.Schema<A, I, R>): ((u: unknown) => u is A) => {
  if (hasParseAnnotations(schema.ast)) return ParseResult.is(schema)
  const check = new Compiler("is").compile(schema.ast)
  return (u): u is A => check(u) === PASS
}

/**
 * A guard for the decoder's fast path: `true` only when decoding `u` with the schema
 * succeeds and gives `u` back, the same value, except for properties the schema does
 * not name (the decoder drops them; here they stay). `false` means "ask the decoder",
 * which then either decodes or explains what is wrong.
 *
 * On a schema without transformations (its type and encoded sides are the same shape)
 * a value passes exactly when it is valid. A transformation, or a declaration whose
 * decoder builds a new value, is left to the decoder; so are the members of a union
 * after such a member, since the decoder would use its result if it succeeds.
 *
 * @since 0.1.0
 * @category guards
 */
export const decodesToItself = <A, I, R>(schema: Schema.Schema<A, I, R>): ((u: unknown) => u is A) => {
  if (hasParseAnnotations(schema.ast)) return (_): _ is A => false
  const check = new Compiler("decode").compile(schema.ast)
  return (u): u is A => check(u) === PASS
}
