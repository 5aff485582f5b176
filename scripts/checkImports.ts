/**
 * Holds the walls between the workspace's parts: every package is reached by its name.
 *
 * It reads every module of `packages/*` and `scripts/` with the TypeScript compiler's
 * parser and fails on
 * - a relative path in a package that leads into another package (`../../turns/test/...`,
 *   `new URL("../../client/src/index.ts", import.meta.url)`, a fixture read by path): the
 *   other package's helpers and fixtures are `@sluice/testing`'s, its API its name's;
 * - a path in a package that leads into `scripts/`: the test preset and helpers that
 *   lived there are `@sluice/testing/vitest` and its other subpaths;
 * - an import in `scripts/` of a package's sources by path, or of a package's
 *   `internal/` modules (`@sluice/redis/internal/resp`): benches and tools measure
 *   through the public API.
 *
 * A relative path is any string that starts with `./` or `../`, as a module specifier
 * or not, resolved from the directory of the file it is in. Run with
 * `tsx scripts/checkImports.ts` (`pnpm lint` runs it); it prints each problem and how
 * many of each kind, and exits 1 when there is one.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve, sep } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

/** The kinds of problem, as the summary counts them. */
export type ImportKind = "cross-package" | "scripts-from-package" | "internal-from-scripts"

/** One string that crosses a wall. */
export interface ImportProblem {
  readonly kind: ImportKind
  /** The file, from the repository's root. */
  readonly file: string
  /** The 1-based line of the string. */
  readonly line: number
  /** The string as written. */
  readonly specifier: string
  /** The problem in a sentence. */
  readonly message: string
}

const sourceFile = /\.(ts|tsx|mts|cts|mjs|js)$/
const skipped = new Set(["node_modules", "dist", ".examples", "bench-results", "test-artifacts"])

const walk = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir).flatMap((name) => {
    if (skipped.has(name)) return []
    const path = join(dir, name)
    return statSync(path).isDirectory() ? walk(path) : sourceFile.test(name) ? [path] : []
  })

/** The strings of a module, with whether each is a module specifier, and its line. */
const stringsOf = (path: string, text: string) => {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true)
  const found: Array<{ readonly value: string; readonly specifier: boolean; readonly line: number }> = []
  const lineOf = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1
  const visit = (node: ts.Node): void => {
    // `join(here, "..", "..", "pipeline", "test", "fixtures")`: its literal parts as one path
    if (ts.isCallExpression(node) && /(^|\.)(join|resolve)$/.test(node.expression.getText(source))) {
      const parts = node.arguments.flatMap((argument) => ts.isStringLiteral(argument) ? [argument.text] : [])
      if (parts.length > 1) found.push({ value: parts.join("/"), specifier: false, line: lineOf(node) })
    }
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node)) {
      const parent = node.parent
      const specifier = (ts.isImportDeclaration(parent) || ts.isExportDeclaration(parent)) &&
          parent.moduleSpecifier === node ||
        ts.isExternalModuleReference(parent) ||
        ts.isLiteralTypeNode(parent) && ts.isImportTypeNode(parent.parent) ||
        ts.isCallExpression(parent) && parent.expression.kind === ts.SyntaxKind.ImportKeyword
      found.push({ value: node.text, specifier, line: lineOf(node) })
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/** The part of the repository a path is in: a package by its directory name, `scripts`, or another. */
const partOf = (root: string, path: string): { readonly part: string; readonly rest: ReadonlyArray<string> } => {
  const segments = relative(root, path).split(sep)
  if (segments[0] === "packages" && segments.length > 1) {
    return { part: `packages/${segments[1]}`, rest: segments.slice(2) }
  }
  return { part: segments[0] ?? "", rest: segments.slice(1) }
}

/**
 * The crossings still there, each with what it waits for: a wall of this list is not
 * held, and an entry that no longer crosses fails the check (it must go).
 */
export const known: ReadonlyArray<{ readonly file: string; readonly specifier: string; readonly why: string }> = [
  ...[
    "../../packages/durable-streams/src/internal/subscriptionWire.js",
    "../../packages/durable-streams/src/internal/webhookLookup.js"
  ].map((specifier) => ({
    file: "scripts/bench/handwritten.ts",
    specifier,
    why: "the webhook checks measured beside request-filtering-agent: not public"
  })),
  {
    file: "scripts/bench/pipelineFloor.ts",
    specifier: "../../packages/redis/src/internal/resp.js",
    why: "the RESP encoder, the floor of a write: not public"
  }
]

/** Every string of `packages/*` and `scripts/` that crosses a wall, in file order. */
export const checkImports = (root: string): ReadonlyArray<ImportProblem> => {
  const files = [...walk(join(root, "packages")), ...walk(join(root, "scripts"))]
  const packageDirs = new Set(readdirSync(join(root, "packages")))
  return files.flatMap((path) => {
    const file = relative(root, path).split(sep).join("/")
    const home = partOf(root, path).part
    return stringsOf(path, readFileSync(path, "utf8")).flatMap(({ line, specifier, value }): Array<ImportProblem> => {
      const problem = (kind: ImportKind, message: string): Array<ImportProblem> => [
        { kind, file, line, specifier: value, message }
      ]
      if (home === "scripts" && specifier && /^@sluice\/[^/]+\/(.*\/)?internal(\/|$)/.test(value)) {
        return problem("internal-from-scripts", `${value} is a package's internal module; use its public API`)
      }
      const named = /(?:^|\/)(?:\.\.|packages)\/([a-z-]+)\/(?:src|test)(?:\/|$)/.exec(value)
      if (
        home.startsWith("packages/") && !specifier && named !== null && `packages/${named[1]}` !== home &&
        packageDirs.has(named[1] ?? "")
      ) {
        return problem("cross-package", `${value} leads into packages/${named[1]}; use @sluice/testing`)
      }
      if (!value.startsWith("./") && !value.startsWith("../")) return []
      const target = partOf(root, resolve(dirname(path), value))
      if (home.startsWith("packages/") && target.part === "scripts") {
        return problem("scripts-from-package", `${value} leads into scripts/; use @sluice/testing`)
      }
      if (home.startsWith("packages/") && target.part.startsWith("packages/") && target.part !== home) {
        const name = `@sluice/${target.part.slice("packages/".length)}`
        const instead = name === "@sluice/testing" ? name : `${name} or @sluice/testing`
        return problem("cross-package", `${value} leads into ${target.part}; import ${instead}`)
      }
      if (home === "scripts" && target.part.startsWith("packages/") && specifier) {
        return problem("internal-from-scripts", `${value} imports ${target.part} by path; import it by its name`)
      }
      return []
    })
  })
}

/** The problems not in `known`, and the entries of `known` that no longer cross. */
export const unknown = (
  problems: ReadonlyArray<ImportProblem>
): { readonly problems: ReadonlyArray<ImportProblem>; readonly stale: typeof known } => {
  const isKnown = (problem: ImportProblem) =>
    known.some((entry) => entry.file === problem.file && entry.specifier === problem.specifier)
  return {
    problems: problems.filter((problem) => !isKnown(problem)),
    stale: known.filter((entry) =>
      !problems.some((problem) => problem.file === entry.file && problem.specifier === entry.specifier)
    )
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = process.argv[2] === undefined
    ? join(dirname(fileURLToPath(import.meta.url)), "..")
    : resolve(process.argv[2])
  const all = checkImports(root)
  const { problems, stale } = unknown(all)
  for (const { file, specifier } of stale) {
    process.stderr.write(`${file}: ${specifier} no longer crosses; drop it from known\n`)
  }
  for (const { file, line, message } of problems) process.stderr.write(`${file}:${line}: ${message}\n`)
  const count = (kind: ImportKind) => problems.filter((problem) => problem.kind === kind).length
  process.stdout.write(
    `checkImports: ${count("cross-package")} relative paths from one package into another, ` +
      `${count("scripts-from-package")} paths from a package into scripts/, ` +
      `${count("internal-from-scripts")} imports of a package's sources or internals from scripts/\n`
  )
  process.stdout.write(
    `checkImports: ${all.length - problems.length} known crossings left (known in checkImports.ts)\n`
  )
  if (problems.length > 0 || stale.length > 0) process.exitCode = 1
}
