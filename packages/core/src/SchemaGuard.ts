/**
 * Guards built once per schema on `effect/Schema`'s own parser: the same answer as
 * `Schema.is`, or as a successful decode, for the hot path of wire decoding, where
 * nearly every value is valid and is used as it arrived.
 *
 * Both guards are made once per schema (and cached by its AST), never per value, and
 * the schema's parser is compiled once to JavaScript by Effect's own JIT compiler
 * (`effect/schema/SchemaJITCompiler`), which keeps the interpreted parser wherever it
 * cannot compile (a runtime that forbids `Function`), so the answers never differ.
 * `is` is `Schema.is` itself. `decodesToItself` is `Schema.is` too on a schema whose
 * decoder changes nothing (no transformation anywhere in it, and only declarations
 * whose decoder returns its input, marked with `PredicateAnnotationId`); on any other
 * schema it runs the decoder (`Schema.decodeUnknownExit`) and compares its result with
 * the input, so the answer is always the decoder's.
 *
 * @since 0.1.0
 */
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as SchemaJITCompiler from "effect/schema/SchemaJITCompiler"
import type * as AST from "effect/SchemaAST"

/**
 * An annotation for a declaration without type parameters (`Schema.declare(is)`): the
 * predicate its decoder applies, which returns the input unchanged when it holds. A
 * schema whose declarations all carry it (and which has no transformation) decodes
 * every valid value to itself, so `decodesToItself` answers with `Schema.is` alone.
 *
 * @since 0.1.0
 * @category annotations
 */
export const PredicateAnnotationId: unique symbol = Symbol.for("@sluice/core/SchemaGuard/Predicate")

type Guard = (u: unknown) => boolean

const compiled = new WeakSet<AST.AST>()
const guards = new WeakMap<AST.AST, Guard>()
const decodingGuards = new WeakMap<AST.AST, Guard>()

const hasPredicate = (ast: AST.Declaration): boolean =>
  ast.typeParameters.length === 0 && ast.encodingRun === undefined &&
  ast.annotations !== undefined && typeof Reflect.get(ast.annotations, PredicateAnnotationId) === "function"

/** Whether decoding a valid value gives it back: no transformation, no copying declaration. */
const decodesAsIs = (ast: AST.AST, seen: Set<AST.AST> = new Set()): boolean => {
  if (seen.has(ast)) return true
  seen.add(ast)
  if (ast.encoding !== undefined) return false
  switch (ast._tag) {
    case "Declaration":
      return hasPredicate(ast)
    case "Arrays":
      return ast.encodingChecks === undefined &&
        ast.elements.every((element) => decodesAsIs(element, seen)) &&
        ast.rest.every((rest) => decodesAsIs(rest, seen))
    case "Objects":
      return ast.encodingChecks === undefined &&
        ast.propertySignatures.every((ps) => decodesAsIs(ps.type, seen)) &&
        ast.indexSignatures.every((is) => decodesAsIs(is.parameter, seen) && decodesAsIs(is.type, seen))
    case "Union":
      return ast.encodingChecks === undefined && ast.types.every((member) => decodesAsIs(member, seen))
    case "Suspend":
      return decodesAsIs(ast.thunk(), seen)
    default:
      return true
  }
}

const isPlainObject = (value: object): boolean => {
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/**
 * Whether a decoded value is the input as it arrived: the same leaves and objects,
 * arrays and plain objects rebuilt with some of the input's own properties left out.
 */
const isInputAsIs = (decoded: unknown, input: unknown): boolean => {
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
    const d = (decoded as Record<PropertyKey, unknown>)[key]
    const i = (input as Record<PropertyKey, unknown>)[key]
    if (!isInputAsIs(d, i)) return false
  }
  return true
}

/** Has Effect compile the schema's parser, once, before its first use. */
const compile = (ast: AST.AST): void => {
  if (compiled.has(ast)) return
  compiled.add(ast)
  SchemaJITCompiler.enable(ast)
}

const makeIs = (schema: Schema.Constraint): Guard => {
  let guard = guards.get(schema.ast)
  if (guard === undefined) {
    compile(schema.ast)
    const is = Schema.is(schema)
    guard = (u) => {
      try {
        return is(u)
      } catch {
        return false
      }
    }
    guards.set(schema.ast, guard)
  }
  return guard
}

const makeDecodingGuard = (schema: Schema.ConstraintDecoder<unknown>): Guard => {
  let guard = decodingGuards.get(schema.ast)
  if (guard === undefined) {
    if (decodesAsIs(schema.ast)) {
      guard = makeIs(schema)
    } else {
      compile(schema.ast)
      const decode = Schema.decodeUnknownExit(schema)
      guard = (u) => {
        try {
          const exit = decode(u)
          return Exit.isSuccess(exit) && isInputAsIs(exit.value, u)
        } catch {
          return false
        }
      }
    }
    decodingGuards.set(schema.ast, guard)
  }
  return guard
}

/**
 * A guard that answers exactly as `Schema.is(schema)` does, made once per schema.
 * Extra properties are allowed, as `Schema.is` allows them. Where `Schema.is` would
 * throw (see `SchemaDecode`), the guard says `false`.
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
 * a value passes exactly when it is valid, and the guard is `Schema.is`. On any other
 * schema (a transformation, a declaration whose decoder builds a new value) the guard
 * runs the decoder and passes a value only when what it gives back is the value itself
 * (objects and arrays rebuilt with the same contents count as the same).
 *
 * @since 0.1.0
 * @category guards
 */
export const decodesToItself = <S extends Schema.ConstraintDecoder<unknown>>(
  schema: S
): (u: unknown) => u is S["Type"] => makeDecodingGuard(schema) as (u: unknown) => u is S["Type"]
