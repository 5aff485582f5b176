/**
 * Guards compiled from a Schema's AST: the same answer as `Schema.is`, or as a
 * successful decode, without running the parser per node. Made for the hot path of
 * wire decoding, where nearly every value is valid and is used as it arrived.
 *
 * Both guards are compiled once per schema (and cached by its AST), never per value,
 * to JavaScript source that follows `effect/SchemaParser` node by node (structs and
 * records, arrays, unions, keywords and literals, filters on them, declarations marked
 * with `PredicateAnnotationId`, suspended schemas). Nodes a guard cannot follow exactly
 * (a filter over a struct, tuples, enums, template literals, other declarations, ...)
 * are handed to `effect/SchemaParser` itself, so the answer never differs. Where the
 * runtime forbids `Function`, the guards are `Schema.is` and the decoder themselves.
 * The schema's own parser, which the decoder falls back to, is compiled by Effect's JIT
 * compiler (`effect/schema/SchemaJITCompiler`).
 *
 * @since 0.1.0
 */
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as SchemaJITCompiler from "effect/schema/SchemaJITCompiler"
import * as AST from "effect/SchemaAST"
import {
  type Check,
  Compiler,
  isInputAsIs,
  type Mode,
  PASS,
  PredicateAnnotationId as predicateAnnotationId
} from "./internal/guardCompiler.js"

/**
 * An annotation for a declaration without type parameters (`Schema.declare(is)`): the
 * predicate its decoder applies, which returns the input unchanged when it holds. A
 * compiled guard calls it directly instead of the declaration's decoder.
 *
 * @since 0.1.0
 * @category annotations
 */
export const PredicateAnnotationId: typeof predicateAnnotationId = predicateAnnotationId

type Guard = (u: unknown) => boolean

const jit = new WeakSet<AST.AST>()
const guards = new WeakMap<AST.AST, Guard>()
const decodingGuards = new WeakMap<AST.AST, Guard>()

/** Has Effect compile the schema's parser, once, before its first use. */
const enableJit = (ast: AST.AST): void => {
  if (jit.has(ast)) return
  jit.add(ast)
  SchemaJITCompiler.enable(ast)
}

/** The compiled check of a node, or `undefined` where the runtime forbids generated code. */
const compile = (compiler: Compiler, ast: AST.AST): Check | undefined => {
  try {
    return compiler.compile(ast)
  } catch {
    return undefined
  }
}

/** A guard that says `false` where its check throws (see `SchemaDecode`). */
const total = (check: Guard): Guard => (u) => {
  try {
    return check(u)
  } catch {
    return false
  }
}

/** The guard of a node: its compiled check, else `fallback` (no generated code here). */
const guardOf = (
  cache: WeakMap<AST.AST, Guard>,
  mode: Mode,
  ast: AST.AST,
  compiledAst: AST.AST,
  fallback: () => Guard
): Guard => {
  let guard = cache.get(ast)
  if (guard === undefined) {
    enableJit(ast)
    const check = compile(new Compiler(mode), compiledAst)
    guard = total(check === undefined ? fallback() : (u) => check(u) === PASS)
    cache.set(ast, guard)
  }
  return guard
}

const makeIs = (schema: Schema.Constraint): Guard =>
  guardOf(guards, "is", schema.ast, AST.toType(schema.ast), () => Schema.is(schema))

const makeDecodingGuard = (schema: Schema.ConstraintDecoder<unknown>): Guard =>
  guardOf(decodingGuards, "decode", schema.ast, schema.ast, () => {
    const decode = Schema.decodeUnknownExit(schema)
    return (u) => {
      const exit = decode(u)
      return Exit.isSuccess(exit) && isInputAsIs(exit.value, u)
    }
  })

/**
 * A guard that answers exactly as `Schema.is(schema)` does, compiled once from the
 * schema's type side. Extra properties are allowed, as `Schema.is` allows them. Where
 * `Schema.is` would throw (see `SchemaDecode`), the guard says `false`.
 *
 * @since 0.1.0
 * @category guards
 */
export const is = <S extends Schema.Constraint>(schema: S): (u: unknown) => u is S["Type"] =>
  makeIs(schema) as (u: unknown) => u is S["Type"]

/**
 * A guard for the decoder's fast path: `true` only when decoding `u` with the schema
 * succeeds and gives `u` back, the same value, except for properties the schema does
 * not name (the decoder drops them; here they stay). `false` means "ask the decoder",
 * which then either decodes or explains what is wrong.
 *
 * On a schema without transformations (its type and encoded sides are the same shape)
 * a value passes exactly when it is valid. A transformation is left to the decoder, and
 * so is a declaration whose decoder builds a new value (the guard runs that node's
 * decoder and passes only what it gives back as it was); so are the members of a union
 * after such a member, since the decoder would use its result if it succeeds.
 *
 * @since 0.1.0
 * @category guards
 */
export const decodesToItself = <S extends Schema.ConstraintDecoder<unknown>>(
  schema: S
): (u: unknown) => u is S["Type"] => makeDecodingGuard(schema) as (u: unknown) => u is S["Type"]
