/**
 * The `@since` tags of the packages' exports, checked against the history: an export of
 * `packages/<name>/src` (not in an `internal` folder), keyed by its package, its module (the
 * path under `src/`, or the namespace its package's `index.ts` makes of it, so that a
 * module moved into a folder keeps its history) and its name, is `@since 0.1.0` when the same package's same module
 * exported that name at 0.1.0's commit, else `@since 0.2.0` when it did at 0.2.0's, and
 * so on through the release points (`releasePoints.ts`); else it is new in the working
 * tree's version.
 *
 * The exports are read with the TypeScript compiler's parser: `export const | let |
 * function | class | type | interface | enum | namespace NAME`, `export * as NAME from`
 * and `export { ... }` (with or without `from`). An export's tag is the `@since` of the
 * JSDoc comment right before it. A module's own header comment (the first JSDoc of the
 * file) is a tag too: of the `export * as NAME from "./Module.js"` that the package's
 * `index.ts` makes of it, or, for a module no `index.ts` names so (and for `index.ts`
 * itself), of the module file, which wants the first version whose commit had the file.
 * A header without a `@since` is not reported; an export without one is.
 *
 * The points are read with `git show`. Without the history (not a repository, or a
 * shallow clone that lacks a point's commit) the audit says so and checks nothing.
 *
 * `tsx scripts/release/since.ts` reports every tag that disagrees and exits 1 if any does;
 * `--fix` rewrites them in place (a missing tag is added); `--version X.Y.Z` names the
 * working tree's version (by default the packages' own, or, while they still say the
 * last release point's, the next minor); `--root DIR` audits another checkout, and
 * `--point VERSION=COMMIT` (repeated, oldest first) replaces the release points.
 */
import { execFileSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { dirname, join, posix } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import ts from "typescript"
import { releasePoints } from "./releasePoints.js"

/** A version and the commit that holds its source. */
export interface Point {
  readonly version: string
  readonly commit: string
}

/** One `@since` tag that disagrees with the history, or an export that has none. */
export interface SinceProblem {
  /** The package's name (`@sluice/core`). */
  readonly pkg: string
  /** The file, from the repository's root. */
  readonly file: string
  /** The 1-based line of the export (or of the module's header). */
  readonly line: number
  /** The export's name; a module header is `NAME (module header)`. */
  readonly name: string
  /** The version the tag names, or `undefined` when there is no tag. */
  readonly has: string | undefined
  /** The version the history gives it. */
  readonly wants: string
  /** The problem in a sentence. */
  readonly message: string
}

/** Why nothing was checked (or fixed): the history is not there. */
export interface Skipped {
  readonly _tag: "Skipped"
  readonly reason: string
}

/** What an audit found: the problems, or why it checked nothing. */
export type Audit =
  | Skipped
  | {
    readonly _tag: "Audited"
    /** The version the working tree was taken to be. */
    readonly version: string
    /** How many tags (exports and module headers) were checked. */
    readonly checked: number
    readonly problems: ReadonlyArray<SinceProblem>
  }

/** The options of an audit; the defaults are the repository's own. */
export interface AuditOptions {
  /** The release points, oldest first (default: `releasePoints`). */
  readonly points?: ReadonlyArray<Point>
  /** The working tree's version (default: see `workingVersion`). */
  readonly version?: string
}

// --- reading a module's exports ------------------------------------------------------

/** A `@since` tag's version: its text and where it is in the file. */
interface VersionSpan {
  readonly text: string
  readonly start: number
  readonly end: number
}

/** A JSDoc comment and the `@since` tags in it. */
interface Doc {
  readonly start: number
  readonly end: number
  readonly since: ReadonlyArray<VersionSpan>
  /** Where the first tag of the comment starts, if it has any. */
  readonly firstTag: number | undefined
}

/** A place that carries one `@since`: a declaration with its names, or a module header. */
interface Site {
  readonly names: ReadonlyArray<string>
  /** Where the declaration starts (its `export`), for a comment that is added. */
  readonly start: number
  readonly line: number
  readonly doc: Doc | undefined
}

/** The exports of one module and where their tags are. */
interface ModuleExports {
  readonly names: ReadonlySet<string>
  readonly sites: ReadonlyArray<Site>
  readonly header: Doc | undefined
  /** `export * as NAME from "./Module.js"`: the module's path under `src/` to its names. */
  readonly namespaces: ReadonlyMap<string, ReadonlyArray<string>>
}

const isJsDocRange = (text: string, range: ts.CommentRange): boolean =>
  range.kind === ts.SyntaxKind.MultiLineCommentTrivia && text.startsWith("/**", range.pos) &&
  !text.startsWith("/**/", range.pos)

/**
 * The `@since` tags of one JSDoc comment, read by the compiler's JSDoc parser from the
 * comment alone (followed by a declaration for it to belong to).
 */
const readDoc = (text: string, range: ts.CommentRange): Doc => {
  const comment = text.slice(range.pos, range.end)
  const probe = ts.createSourceFile("doc.ts", `${comment}\nfunction _() {}`, ts.ScriptTarget.Latest, true)
  const declaration = probe.statements[0]
  const tags = declaration === undefined ? [] : ts.getJSDocTags(declaration)
  const since: Array<VersionSpan> = []
  for (const tag of tags) {
    if (tag.tagName.text !== "since") continue
    let start = tag.tagName.end
    while (start < comment.length && (comment[start] === " " || comment[start] === "\t")) start++
    let end = start
    while (end < comment.length && !/[\s*]/.test(comment[end] ?? " ")) end++
    since.push({ text: comment.slice(start, end), start: range.pos + start, end: range.pos + end })
  }
  const first = tags[0]
  return {
    start: range.pos,
    end: range.end,
    since,
    firstTag: first === undefined ? undefined : range.pos + first.getStart(probe)
  }
}

/** The JSDoc comments right before a node, nearest last. */
const docRanges = (text: string, node: ts.Node): ReadonlyArray<ts.CommentRange> =>
  (ts.getLeadingCommentRanges(text, node.pos) ?? []).filter((range) => isJsDocRange(text, range))

/** Whether a declaration is `export`ed by name (`export default` has none). */
const hasExportModifier = (node: ts.Node): boolean => {
  const kinds = (ts.canHaveModifiers(node) ? ts.getModifiers(node) ?? [] : []).map((modifier) => modifier.kind)
  return kinds.includes(ts.SyntaxKind.ExportKeyword) && !kinds.includes(ts.SyntaxKind.DefaultKeyword)
}

const bindingNames = (name: ts.BindingName): ReadonlyArray<string> =>
  ts.isIdentifier(name)
    ? [name.text]
    : name.elements.flatMap((element) => ts.isOmittedExpression(element) ? [] : bindingNames(element.name))

/** The names a top-level statement exports, and the module a namespace export names. */
const exportedNames = (
  statement: ts.Statement
): { readonly names: ReadonlyArray<string>; readonly namespaceOf?: string } => {
  if (ts.isExportDeclaration(statement)) {
    const clause = statement.exportClause
    if (clause === undefined) return { names: [] } // `export * from`: no name of its own
    if (ts.isNamespaceExport(clause)) {
      const specifier = statement.moduleSpecifier
      return specifier !== undefined && ts.isStringLiteral(specifier)
        ? { names: [clause.name.text], namespaceOf: specifier.text }
        : { names: [clause.name.text] }
    }
    return { names: clause.elements.map((element) => element.name.text) }
  }
  if (!hasExportModifier(statement)) return { names: [] }
  if (ts.isVariableStatement(statement)) {
    return { names: statement.declarationList.declarations.flatMap((declaration) => bindingNames(declaration.name)) }
  }
  if (
    ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement) || ts.isInterfaceDeclaration(statement) ||
    ts.isTypeAliasDeclaration(statement) || ts.isEnumDeclaration(statement) ||
    ts.isImportEqualsDeclaration(statement)
  ) {
    return { names: statement.name === undefined ? [] : [statement.name.text] }
  }
  if (ts.isModuleDeclaration(statement) && ts.isIdentifier(statement.name)) return { names: [statement.name.text] }
  return { names: [] }
}

/** The path under `src/` of the module a relative specifier names (`./A.js` → `A.ts`). */
const modulePath = (from: string, specifier: string): string | undefined => {
  if (!specifier.startsWith("./") && !specifier.startsWith("../")) return undefined
  const path = posix.normalize(posix.join(posix.dirname(from), specifier))
  return path.endsWith(".js") ? `${path.slice(0, -3)}.ts` : path.endsWith(".ts") ? path : `${path}.ts`
}

/** Reads one module's exports with the compiler's parser. */
const readExports = (path: string, text: string): ModuleExports => {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const names = new Set<string>()
  const sites: Array<Site> = []
  const namespaces = new Map<string, Array<string>>()
  // an overloaded function's tags are on its signatures, not on its implementation
  const functions = new Map<string, number>()
  for (const statement of source.statements) {
    if (ts.isFunctionDeclaration(statement) && statement.name !== undefined && hasExportModifier(statement)) {
      functions.set(statement.name.text, (functions.get(statement.name.text) ?? 0) + 1)
    }
  }
  let header: Doc | undefined
  source.statements.forEach((statement, index) => {
    const exported = exportedNames(statement)
    const ranges = docRanges(text, statement)
    if (index === 0) {
      // the file's first JSDoc is its header, unless it is the only one before an export
      const first = ranges[0]
      if (first !== undefined && (exported.names.length === 0 || ranges.length > 1)) header = readDoc(text, first)
    }
    if (exported.names.length === 0) return
    for (const name of exported.names) names.add(name)
    if (exported.namespaceOf !== undefined) {
      const module = modulePath(path, exported.namespaceOf)
      if (module !== undefined) namespaces.set(module, [...namespaces.get(module) ?? [], ...exported.names])
    }
    if (
      ts.isFunctionDeclaration(statement) && statement.body !== undefined && statement.name !== undefined &&
      (functions.get(statement.name.text) ?? 0) > 1
    ) return
    const siteOf = (names: ReadonlyArray<string>, node: ts.Node, doc: ts.CommentRange | undefined): Site => {
      const start = node.getStart(source)
      return {
        names,
        start,
        line: source.getLineAndCharacterOfPosition(start).line + 1,
        doc: doc === undefined ? undefined : readDoc(text, doc)
      }
    }
    // in `export { a, b }`, a name with a JSDoc of its own is tagged there
    const named = ts.isExportDeclaration(statement) && statement.exportClause !== undefined &&
        ts.isNamedExports(statement.exportClause)
      ? statement.exportClause.elements
      : []
    const ownDocs = named.flatMap((element) => {
      const doc = docRanges(text, element).at(-1)
      return doc === undefined ? [] : [siteOf([element.name.text], element, doc)]
    })
    sites.push(...ownDocs)
    const rest = exported.names.filter((name) => !ownDocs.some((site) => site.names.includes(name)))
    if (rest.length === 0) return
    sites.push(siteOf(rest, statement, ranges.at(-1)))
  })
  return { names, sites, header, namespaces }
}

// --- the packages, in the working tree and at a commit -------------------------------

/** A package's modules: the path under `src/` of each to its text. */
interface Package {
  readonly name: string
  readonly dir: string
  readonly version: string | undefined
  readonly modules: ReadonlyMap<string, string>
}

const isModule = (path: string): boolean =>
  path.endsWith(".ts") && !path.endsWith(".d.ts") && !path.split("/").includes("internal")

/**
 * A module's key in the history: the namespace its package's `index.ts` makes of it
 * (`export * as Name`), so a module moved into a folder keeps its history; else its
 * path under `src/`.
 */
const moduleKeys = (read: ReadonlyMap<string, ModuleExports>): (path: string) => string => {
  const named = read.get("index.ts")?.namespaces ?? new Map<string, ReadonlyArray<string>>()
  return (path) => {
    const name = path === "index.ts" ? undefined : named.get(path)?.[0]
    return name === undefined ? path : `index.ts#${name}`
  }
}

/** The `name` and `version` of a `package.json`'s text, when it has them. */
const manifestOf = (
  text: string
): { readonly name?: string; readonly version?: string; readonly private?: boolean } => {
  const json: unknown = JSON.parse(text)
  if (json === null || typeof json !== "object") return {}
  const name: unknown = Reflect.get(json, "name")
  const version: unknown = Reflect.get(json, "version")
  return {
    ...(Reflect.get(json, "private") === true ? { private: true } : {}),
    ...(typeof name === "string" ? { name } : {}),
    ...(typeof version === "string" ? { version } : {})
  }
}

const walk = (dir: string, base: string): ReadonlyArray<string> =>
  readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry)
    const rel = base === "" ? entry : `${base}/${entry}`
    return statSync(path).isDirectory() ? walk(path, rel) : [rel]
  })

/** The packages of the working tree. */
const workingPackages = (root: string): ReadonlyArray<Package> => {
  const packages = join(root, "packages")
  if (!existsSync(packages)) return []
  return readdirSync(packages).flatMap((dir) => {
    const src = join(packages, dir, "src")
    const manifest = join(packages, dir, "package.json")
    if (!existsSync(src) || !existsSync(manifest)) return []
    const { name, private: unpublished, version } = manifestOf(readFileSync(manifest, "utf8"))
    // a private package (the test scaffolding) is never published: its exports have no version
    if (unpublished === true) return []
    const modules = new Map(
      walk(src, "").filter(isModule).map((path) => [path, readFileSync(join(src, path), "utf8")] as const)
    )
    return [{ name: name ?? dir, dir, version, modules }]
  })
}

const git = (root: string, args: ReadonlyArray<string>): string =>
  execFileSync("git", ["-C", root, ...args], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024, stdio: "pipe" })

const gitSucceeds = (root: string, args: ReadonlyArray<string>): boolean => {
  try {
    git(root, args)
    return true
  } catch {
    return false
  }
}

/** The packages at a commit, their modules read with `git show`. */
const packagesAt = (root: string, commit: string): ReadonlyArray<Package> => {
  const files = git(root, ["ls-tree", "-r", "--name-only", commit, "--", "packages"]).split("\n")
  const byDir = new Map<string, Array<string>>()
  for (const file of files) {
    const parts = file.split("/")
    const dir = parts[1]
    if (parts[0] !== "packages" || dir === undefined || parts[2] !== "src") continue
    const path = parts.slice(3).join("/")
    if (isModule(path)) byDir.set(dir, [...byDir.get(dir) ?? [], path])
  }
  return [...byDir].map(([dir, paths]) => {
    const manifest = files.includes(`packages/${dir}/package.json`)
      ? manifestOf(git(root, ["show", `${commit}:packages/${dir}/package.json`]))
      : {}
    const modules = new Map(paths.map((path) => [path, git(root, ["show", `${commit}:packages/${dir}/src/${path}`])]))
    return { name: manifest.name ?? dir, dir, version: manifest.version, modules }
  })
}

/** Why the history cannot be read, or `undefined` when every point's commit is there. */
const missingHistory = (root: string, points: ReadonlyArray<Point>): string | undefined => {
  if (!gitSucceeds(root, ["rev-parse", "--git-dir"])) return `${root} is not a git repository`
  const shallow = git(root, ["rev-parse", "--is-shallow-repository"]).trim() === "true"
  for (const point of points) {
    if (!gitSucceeds(root, ["cat-file", "-e", `${point.commit}^{commit}`])) {
      return `the commit of ${point.version} (${point.commit}) is not in this clone${
        shallow ? " (a shallow clone: `git fetch --unshallow` brings the history)" : ""
      }`
    }
  }
  return undefined
}

// --- versions ------------------------------------------------------------------------

const versionNumbers = (version: string): readonly [number, number, number] | undefined => {
  const parts = version.split(".")
  if (parts.length !== 3 || parts.some((part) => !/^\d+$/.test(part))) return undefined
  return [Number(parts[0]), Number(parts[1]), Number(parts[2])]
}

const compareVersions = (a: string, b: string): number => {
  const x = versionNumbers(a) ?? [0, 0, 0]
  const y = versionNumbers(b) ?? [0, 0, 0]
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2]
}

/**
 * The version of the working tree: the packages' own when it is later than every
 * release point (after `changeset version`), else the minor after the last point (the
 * release being prepared, while the packages still carry the last point's version).
 */
export const workingVersion = (
  points: ReadonlyArray<Point>,
  packageVersions: ReadonlyArray<string>
): string => {
  const last = points.map((point) => point.version).sort(compareVersions).at(-1) ?? "0.0.0"
  const own = packageVersions.filter((version) => versionNumbers(version) !== undefined).sort(compareVersions).at(-1)
  if (own !== undefined && compareVersions(own, last) > 0) return own
  const [major, minor] = versionNumbers(last) ?? [0, 0, 0]
  return `${major}.${minor + 1}.0`
}

// --- the audit -----------------------------------------------------------------------

/** A tag to check: where it is, what it names, and the version it should name. */
interface Check {
  readonly pkg: string
  readonly file: string
  readonly line: number
  readonly label: string
  readonly names: ReadonlyArray<string>
  readonly wants: ReadonlyArray<string>
  readonly start: number
  readonly doc: Doc | undefined
}

/** Every tag of the working tree with the version the history gives it. */
const checks = (
  root: string,
  points: ReadonlyArray<Point>,
  version: string
): ReadonlyArray<Check> => {
  // for each point, package name -> module path -> its exported names
  const history = points.map((point) => ({
    version: point.version,
    packages: new Map(
      packagesAt(root, point.commit).map((pkg) => {
        const read = new Map([...pkg.modules].map(([path, text]) => [path, readExports(path, text)]))
        const keyOf = moduleKeys(read)
        // under its path and under its namespace's name: a module is the same as either
        return [
          pkg.name,
          new Map(
            [...read].flatMap(([path, exports]) => [[path, exports.names], [keyOf(path), exports.names]] as const)
          )
        ]
      })
    )
  }))
  const firstWith = (found: (modules: ReadonlyMap<string, ReadonlySet<string>>) => boolean, pkg: string): string =>
    history.find((point) => {
      const modules = point.packages.get(pkg)
      return modules !== undefined && found(modules)
    })?.version ?? version
  const exportWants = (pkg: string, paths: ReadonlyArray<string>, name: string): string =>
    firstWith((modules) => paths.some((path) => modules.get(path)?.has(name) === true), pkg)
  const moduleWants = (pkg: string, paths: ReadonlyArray<string>): string =>
    firstWith((modules) => paths.some((path) => modules.has(path)), pkg)

  const result: Array<Check> = []
  for (const pkg of workingPackages(root)) {
    const read = new Map([...pkg.modules].map(([path, text]) => [path, readExports(path, text)]))
    const namespaceNames = read.get("index.ts")?.namespaces ?? new Map<string, ReadonlyArray<string>>()
    const keyOf = moduleKeys(read)
    for (const [path, exports] of read) {
      const file = `packages/${pkg.dir}/src/${path}`
      const text = pkg.modules.get(path) ?? ""
      const lineOf = (position: number): number => text.slice(0, position).split("\n").length
      for (const site of exports.sites) {
        result.push({
          pkg: pkg.name,
          file,
          line: site.line,
          label: site.names.join(", "),
          names: site.names,
          wants: site.names.map((name) => exportWants(pkg.name, [path, keyOf(path)], name)),
          start: site.start,
          doc: site.doc
        })
      }
      const header = exports.header
      if (header !== undefined && header.since.length > 0) {
        const asNames = path === "index.ts" ? undefined : namespaceNames.get(path)
        const wants = asNames === undefined
          ? moduleWants(pkg.name, [path, keyOf(path)])
          : asNames.map((name) => exportWants(pkg.name, ["index.ts"], name)).sort(compareVersions)[0] ?? version
        result.push({
          pkg: pkg.name,
          file,
          line: lineOf(header.since[0]?.start ?? header.start),
          label: `${asNames?.join(", ") ?? path} (module header)`,
          names: [],
          wants: [wants],
          start: header.start,
          doc: header
        })
      }
    }
  }
  return result
}

/** The one version a check's names agree on, or `undefined` when they want several. */
const agreed = (check: Check): string | undefined => {
  const distinct = [...new Set(check.wants)]
  return distinct.length === 1 ? distinct[0] : undefined
}

const problemsOf = (check: Check): ReadonlyArray<SinceProblem> => {
  const tags = check.doc?.since.map((span) => span.text) ?? []
  const has = tags.length === 0 ? undefined : tags.join(", ")
  const wants = agreed(check)
  const base = { pkg: check.pkg, file: check.file, line: check.line }
  if (wants === undefined) {
    const names = check.names.map((name, index) => `${name} ${check.wants[index] ?? ""}`).join(", ")
    return [{
      ...base,
      name: check.label,
      has,
      wants: [...new Set(check.wants)].sort(compareVersions).join(" / "),
      message: `one tag for names of different versions (${names}): export them in separate declarations`
    }]
  }
  if (tags.length === 1 && has === wants) return []
  return [{
    ...base,
    name: check.label,
    has,
    wants,
    message: has === undefined
      ? `has no @since, wants ${wants}`
      : has === ""
      ? `has an @since without a version, wants ${wants}`
      : tags.length > 1
      ? `has ${tags.length} @since tags (${has}), wants one: ${wants}`
      : `has @since ${has}, wants ${wants}`
  }]
}

/** The release points and the working tree's version an audit uses. */
const settings = (
  root: string,
  options: AuditOptions
): { readonly points: ReadonlyArray<Point>; readonly version: string } => {
  const points = options.points ?? releasePoints
  const version = options.version ??
    workingVersion(points, workingPackages(root).flatMap((pkg) => pkg.version === undefined ? [] : [pkg.version]))
  return { points, version }
}

/** File by file (in code-unit order, as `git ls-files` lists them), line by line. */
const byPlace = (
  a: { readonly file: string; readonly line: number },
  b: { readonly file: string; readonly line: number }
): number => a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line

/**
 * Every export (and module header) whose `@since` disagrees with the history, or why
 * nothing was checked (no git history, a commit missing).
 */
export const audit = (root: string, options: AuditOptions = {}): Audit => {
  const { points, version } = settings(root, options)
  const missing = missingHistory(root, points)
  if (missing !== undefined) return { _tag: "Skipped", reason: `${missing}; the @since tags were not checked` }
  const all = checks(root, points, version)
  const problems = all.flatMap(problemsOf).sort(byPlace)
  return { _tag: "Audited", version, checked: all.length, problems }
}

/** One rewrite of a tag: the version it named (`undefined`: none) and the one it names now. */
export interface Change {
  readonly file: string
  readonly line: number
  readonly name: string
  readonly from: string | undefined
  readonly to: string
}

/** What `fix` did: the tags it rewrote, and what it could not fix. */
export type Fixed =
  | Skipped
  | {
    readonly _tag: "Fixed"
    readonly version: string
    readonly changes: ReadonlyArray<Change>
    readonly problems: ReadonlyArray<SinceProblem>
  }

interface Edit {
  readonly start: number
  readonly end: number
  readonly text: string
}

const lineStart = (text: string, position: number): number => text.lastIndexOf("\n", position - 1) + 1

/** The edits that make a check's comment carry exactly `@since wants`. */
const editsOf = (text: string, check: Check, wants: string): ReadonlyArray<Edit> => {
  const doc = check.doc
  if (doc === undefined) {
    const indent = text.slice(lineStart(text, check.start), check.start)
    return [{ start: check.start, end: check.start, text: `/**\n${indent} * @since ${wants}\n${indent} */\n${indent}` }]
  }
  const [first, ...rest] = doc.since
  if (first !== undefined) {
    const spaced = first.text !== "" || text[first.start - 1] === " "
    return [
      { start: first.start, end: first.end, text: spaced ? wants : ` ${wants}` },
      // a second @since on its own line goes, with its line
      ...rest.map((span) => {
        const start = lineStart(text, span.start)
        const next = text.indexOf("\n", span.end)
        return { start, end: next < 0 ? span.end : next + 1, text: "" }
      })
    ]
  }
  const indent = text.slice(lineStart(text, doc.start), doc.start)
  const comment = text.slice(doc.start, doc.end)
  if (!comment.includes("\n")) {
    const body = comment.slice(3, -2).trim()
    return [{
      start: doc.start,
      end: doc.end,
      text: `/**\n${indent} * ${body}\n${indent} *\n${indent} * @since ${wants}\n${indent} */`
    }]
  }
  if (doc.firstTag !== undefined) {
    const at = lineStart(text, doc.firstTag)
    return [{ start: at, end: at, text: `${indent} * @since ${wants}\n` }]
  }
  const close = doc.end - 2
  const at = lineStart(text, close)
  return text.slice(at, close).trim() === ""
    ? [{ start: at, end: at, text: `${indent} *\n${indent} * @since ${wants}\n` }]
    : [{ start: close, end: close, text: `\n${indent} *\n${indent} * @since ${wants}\n${indent} ` }]
}

/** Rewrites every tag that disagrees with the history, in place. */
export const fix = (root: string, options: AuditOptions = {}): Fixed => {
  const { points, version } = settings(root, options)
  const missing = missingHistory(root, points)
  if (missing !== undefined) return { _tag: "Skipped", reason: `${missing}; the @since tags were not fixed` }
  const changes: Array<Change> = []
  const edits = new Map<string, { readonly text: string; readonly edits: Array<Edit> }>()
  for (const check of checks(root, points, version)) {
    const wants = agreed(check)
    if (wants === undefined || problemsOf(check).length === 0) continue
    const file = edits.get(check.file) ?? { text: readFileSync(join(root, check.file), "utf8"), edits: [] }
    edits.set(check.file, file)
    file.edits.push(...editsOf(file.text, check, wants))
    const from = check.doc?.since[0]?.text
    changes.push({
      file: check.file,
      line: check.line,
      name: check.label,
      from: from === "" ? undefined : from,
      to: wants
    })
  }
  for (const [file, { edits: fileEdits, text }] of edits) {
    // from the end, so that each edit's positions still hold
    const rewritten = [...fileEdits].sort((a, b) => b.start - a.start).reduce(
      (current, edit) => current.slice(0, edit.start) + edit.text + current.slice(edit.end),
      text
    )
    writeFileSync(join(root, file), rewritten)
  }
  changes.sort(byPlace)
  const after = audit(root, { points, version })
  return { _tag: "Fixed", version, changes, problems: after._tag === "Audited" ? after.problems : [] }
}

/** A problem as one line of a report. */
export const formatProblem = (problem: SinceProblem): string =>
  `${problem.file}:${problem.line} ${problem.pkg} ${problem.name}: ${problem.message}`

/** The command: a report (exit 1 on any problem) or, with `--fix`, the rewrite. */
const main = (args: ReadonlyArray<string>): number => {
  const flag = (name: string): string | undefined => {
    const at = args.indexOf(name)
    return at < 0 ? undefined : args[at + 1]
  }
  const root = flag("--root") ?? join(dirname(fileURLToPath(import.meta.url)), "..", "..")
  const version = flag("--version")
  const points = args.flatMap((arg, index) => {
    if (arg !== "--point") return []
    const [pointVersion, commit] = (args[index + 1] ?? "").split("=")
    if (pointVersion === undefined || commit === undefined || versionNumbers(pointVersion) === undefined) {
      throw new Error(`--point takes VERSION=COMMIT, not ${args[index + 1] ?? "nothing"}`)
    }
    return [{ version: pointVersion, commit }]
  })
  const options: AuditOptions = {
    ...(version === undefined ? {} : { version }),
    ...(points.length === 0 ? {} : { points })
  }
  if (args.includes("--fix")) {
    const fixed = fix(root, options)
    if (fixed._tag === "Skipped") {
      console.log(`since: ${fixed.reason}`)
      return 0
    }
    const counts = new Map<string, number>()
    for (const change of fixed.changes) {
      const key = `${change.from ?? "none"} -> ${change.to}`
      counts.set(key, (counts.get(key) ?? 0) + 1)
    }
    console.log(`since: the working tree is ${fixed.version}; ${fixed.changes.length} tags rewritten`)
    for (const [key, count] of [...counts].sort()) console.log(`  ${key}: ${count}`)
    for (const problem of fixed.problems) console.log(formatProblem(problem))
    return fixed.problems.length === 0 ? 0 : 1
  }
  const result = audit(root, options)
  if (result._tag === "Skipped") {
    console.log(`since: ${result.reason}`)
    return 0
  }
  for (const problem of result.problems) console.log(formatProblem(problem))
  console.log(
    `since: the working tree is ${result.version}; ${result.checked} tags checked, ${result.problems.length} disagree${
      result.problems.length === 0 ? "" : " (`tsx scripts/release/since.ts --fix` rewrites them)"
    }`
  )
  return result.problems.length === 0 ? 0 : 1
}

const entry = process.argv[1]
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  process.exitCode = main(process.argv.slice(2))
}
