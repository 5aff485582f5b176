/**
 * Guard code generation: a schema node compiled to JavaScript source, one function per
 * struct, tuple, union or refinement, with keywords and literals checked inline. Each
 * property is read by its name in the source, so the engine caches the read per object
 * shape, where a closure shared by every struct reads every name through one slow
 * path. The checks are the closure compiler's, node by node.
 *
 * @internal
 */
import type * as AST from "effect/SchemaAST"
import type { Check, Mode, Verdict } from "./guardCompiler.js"

/** What the generator needs from the compiler that owns it. @internal */
export interface Host {
  readonly mode: Mode
  /** A compiled check for a node the generator leaves to the compiler. */
  readonly compile: (ast: AST.AST) => Check
  /** Whether a node is compiled to source. */
  readonly generates: (ast: AST.AST) => boolean
  readonly missing: (ps: AST.PropertySignature) => Verdict
  readonly indexSignatures: (ast: AST.TypeLiteral) => Check | undefined
  readonly filter: (ast: AST.Refinement) => (u: unknown) => boolean
}

/** The source of a literal compared with `===`, when it has one. */
const literalSource = (literal: AST.LiteralValue): string | undefined => {
  if (literal === null) return "null"
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

/** A node that only passes or fails, as a boolean expression over the variable `v`. */
const leafSource = (ast: AST.AST, v: string): string | undefined => {
  switch (ast._tag) {
    case "Literal": {
      const literal = literalSource(ast.literal)
      return literal === undefined ? undefined : `${v} === ${literal}`
    }
    case "UndefinedKeyword":
      return `${v} === undefined`
    case "NeverKeyword":
      return "false"
    case "UnknownKeyword":
    case "AnyKeyword":
    case "VoidKeyword":
      return "true"
    case "StringKeyword":
      return `typeof ${v} === "string"`
    case "NumberKeyword":
      return `typeof ${v} === "number"`
    case "BooleanKeyword":
      return `typeof ${v} === "boolean"`
    case "BigIntKeyword":
      return `typeof ${v} === "bigint"`
    case "SymbolKeyword":
      return `typeof ${v} === "symbol"`
    case "ObjectKeyword":
      return `((typeof ${v} === "object" && ${v} !== null) || typeof ${v} === "function")`
    case "Union": {
      // members that only pass or fail carry no literal property: the search tries them in order
      const members: Array<string> = []
      for (const member of ast.types) {
        const source = leafSource(member, v)
        if (source === undefined) return undefined
        members.push(source)
      }
      return members.length === 0 ? "false" : `(${members.join(" || ")})`
    }
    default:
      return undefined
  }
}

class Generator {
  private readonly functions: Array<string> = []
  private readonly names = new Map<AST.AST, string>()
  readonly externals: Array<unknown> = []

  constructor(private readonly host: Host) {}

  /** A value the source reads from the externals array. */
  private external(value: unknown): string {
    this.externals.push(value)
    return `x[${this.externals.length - 1}]`
  }

  /** The name of the function that checks a node, generating it the first time. */
  name(ast: AST.AST): string {
    const known = this.names.get(ast)
    if (known !== undefined) return known
    if (!this.host.generates(ast)) {
      const external = this.external(this.host.compile(ast))
      this.names.set(ast, external)
      return external
    }
    const name = `n${this.functions.length}`
    this.functions.push("")
    this.names.set(ast, name)
    this.functions[Number(name.slice(1))] = `function ${name}(u) {\n${this.body(ast)}\n}`
    return name
  }

  /** Statements folding the verdict of a node over `w` into `r`, or returning FAIL. */
  private fold(ast: AST.AST): string {
    const leaf = leafSource(ast, "w")
    if (leaf !== undefined) return `if (!(${leaf})) return 0;`
    return `v = ${this.name(ast)}(w); if (v === 0) return 0; if (v === 2) r = 2;`
  }

  private body(ast: AST.AST): string {
    switch (ast._tag) {
      case "TypeLiteral":
        return this.typeLiteral(ast)
      case "TupleType":
        return this.tuple(ast)
      case "Union":
        return this.union(ast)
      case "Refinement":
        return this.refinement(ast)
      default:
        return `return ${this.external(this.host.compile(ast))}(u);`
    }
  }

  private typeLiteral(ast: AST.TypeLiteral): string {
    if (ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0) {
      return "return u !== null && u !== undefined ? 1 : 0;"
    }
    const lines = ["if (typeof u !== \"object\" || u === null || Array.isArray(u)) return 0;", "let r = 1, v, w;"]
    for (const ps of ast.propertySignatures) {
      const key = typeof ps.name === "string" ? JSON.stringify(ps.name) : this.external(ps.name)
      // `in` is cached per shape and rules out most missing keys before the own-key test
      const present = `if (${key} in u && hasOwn.call(u, ${key})) { w = u[${key}]; ${this.fold(ps.type)} }`
      const missing = this.host.missing(ps)
      lines.push(missing === 1 ? present : `${present} else ${missing === 0 ? "return 0;" : "r = 2;"}`)
    }
    const indexes = this.host.indexSignatures(ast)
    if (indexes !== undefined) lines.push(`v = ${this.external(indexes)}(u); if (v !== 1) return v;`)
    lines.push("return r;")
    return lines.join("\n")
  }

  private tuple(ast: AST.TupleType): string {
    const count = ast.elements.length
    const required = ast.elements.filter((e) => !e.isOptional).length
    const lines = [
      "if (!Array.isArray(u)) return 0;",
      "const length = u.length;",
      `if (length < ${required}) return 0;`
    ]
    if (ast.rest.length === 0) lines.push(`if (length > ${count}) return 0;`)
    lines.push("let r = 1, v, w;")
    ast.elements.forEach((element, i) => {
      const check = `w = u[${i}]; ${this.fold(element.type)}`
      lines.push(element.isOptional ? `if (${i} < length) { ${check} }` : check)
    })
    const rest = ast.rest[0]
    if (rest !== undefined) lines.push(`for (let i = ${count}; i < length; i++) { w = u[i]; ${this.fold(rest.type)} }`)
    lines.push("return r;")
    return lines.join("\n")
  }

  /** The first member that does not fail answers. */
  private union(ast: AST.Union): string {
    const lines = ["let v;"]
    for (const member of ast.types) {
      const leaf = leafSource(member, "u")
      lines.push(leaf !== undefined ? `if (${leaf}) return 1;` : `v = ${this.name(member)}(u); if (v !== 0) return v;`)
    }
    lines.push("return 0;")
    return lines.join("\n")
  }

  private refinement(ast: AST.Refinement): string {
    const leaf = leafSource(ast.from, "u")
    const from = leaf !== undefined
      ? `if (!(${leaf})) return 0;`
      : `const v = ${this.name(ast.from)}(u); if (v !== 1) return v;`
    return `${from}\nreturn ${this.external(this.host.filter(ast))}(u) ? 1 : 0;`
  }

  source(root: string): string {
    return `"use strict";\n${this.functions.join("\n")}\nreturn ${root};`
  }
}

/**
 * Compiles a node the host generates (see `Host.generates`) to one JavaScript function,
 * with the functions of the nodes under it; the nodes it does not generate are the
 * host's checks, called from the source.
 *
 * @internal
 */
export const generate = (ast: AST.AST, host: Host): Check => {
  const generator = new Generator(host)
  const root = generator.name(ast)
  const make = new Function("hasOwn", "x", generator.source(root)) as (
    hasOwn: unknown,
    x: ReadonlyArray<unknown>
  ) => Check
  return make(Object.prototype.hasOwnProperty, generator.externals)
}
