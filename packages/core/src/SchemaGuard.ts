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
import * as ParseResult from "effect/ParseResult"
import type * as Schema from "effect/Schema"
import type * as AST from "effect/SchemaAST"
import {
  type Check,
  Compiler,
  hasParseAnnotations,
  PASS,
  PredicateAnnotationId as predicateAnnotationId,
  UNKNOWN
} from "./internal/guardCompiler.js"

// The decoding guards compiled so far, by schema: normalizers ask for theirs once per
// turn. A schema that carries parse options is left to its decoder.
const compiled = new WeakMap<AST.AST, Check>()
const decodingCheck = (ast: AST.AST): Check => {
  let check = compiled.get(ast)
  if (check === undefined) {
    check = hasParseAnnotations(ast) ? () => UNKNOWN : new Compiler("decode").compile(ast)
    compiled.set(ast, check)
  }
  return check
}

/**
 * An annotation for a declaration without type parameters (`Schema.declare(is)`): the
 * predicate its decoder applies, which returns the input unchanged when it holds. A
 * compiled guard calls it directly instead of the declaration's decoder.
 *
 * @since 0.1.0
 * @category annotations
 */
export const PredicateAnnotationId: typeof predicateAnnotationId = predicateAnnotationId

/**
 * A guard that answers exactly as `Schema.is(schema)` does, compiled once from the
 * schema's type side. Extra properties are allowed, as `Schema.is` allows them. Where
 * `Schema.is` would throw (see `SchemaDecode`), the guard says `false`.
 *
 * @since 0.1.0
 * @category guards
 */
export const is = <A, I, R>(schema: Schema.Schema<A, I, R>): (u: unknown) => u is A => {
  if (hasParseAnnotations(schema.ast)) {
    const is = ParseResult.is(schema)
    return (u): u is A => {
      try {
        return is(u)
      } catch {
        return false
      }
    }
  }
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
export const decodesToItself = <A, I, R>(schema: Schema.Schema<A, I, R>): (u: unknown) => u is A => {
  const check = decodingCheck(schema.ast)
  return (u): u is A => check(u) === PASS
}
