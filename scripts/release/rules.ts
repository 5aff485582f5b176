/**
 * The rules `pnpm release:check` holds a packed package to, as pure functions of what the
 * tarball holds: which files may be published, the versions and internal ranges of the
 * packed `package.json`, the changelog entry for the version, and `@since` tags no later
 * than the version. Each returns the problems it found, with the file they are in.
 */
import * as Schema from "effect/Schema"
import { releasePoints, shortCommit } from "./releasePoints.js"

/** One thing wrong with a package as it would be published. */
export interface Problem {
  /** The package's name (`@sluice/core`), or `workspace` for a problem of the whole. */
  readonly pkg: string
  /** The file the problem is in: a path inside the tarball, or from the repository's root. */
  readonly file: string
  readonly message: string
}

/** A file of a tarball, its path relative to the package's root (`dist/index.js`). */
export interface PackedFile {
  readonly path: string
  readonly data: Uint8Array
}

const Ranges = Schema.optional(Schema.Record(Schema.String, Schema.String))

/** The fields of a `package.json` the check reads. */
export const Manifest = Schema.Struct({
  name: Schema.String,
  version: Schema.String,
  private: Schema.optional(Schema.Boolean),
  exports: Schema.optional(Schema.Unknown),
  dependencies: Ranges,
  peerDependencies: Ranges,
  optionalDependencies: Ranges,
  devDependencies: Ranges
})

/** A decoded `package.json`. */
export type Manifest = typeof Manifest.Type

/** Decodes a `package.json`'s text; throws, naming the field, when it is not one. */
export const decodeManifest: (text: string) => Manifest = Schema.decodeUnknownSync(Schema.fromJsonString(Manifest))

/** The fields of `.changeset/config.json` the check reads. */
export const ChangesetConfig = Schema.Struct({
  access: Schema.optional(Schema.String),
  fixed: Schema.optional(Schema.Array(Schema.Array(Schema.String)))
})

/** Decodes `.changeset/config.json`'s text; throws, naming the field, when it is not one. */
export const decodeChangesetConfig: (text: string) => typeof ChangesetConfig.Type = Schema.decodeUnknownSync(
  Schema.fromJsonString(ChangesetConfig)
)

// --- what a tarball may hold ---------------------------------------------------------

/**
 * Files that are never published, whatever `files` in package.json says: the first that
 * matches names the reason. These win over the allow list.
 */
export const denied: ReadonlyArray<readonly [RegExp, string]> = [
  [/\.tsbuildinfo$/, "TypeScript build info"],
  [/(^|\/)(test|tests|__tests__)\//, "a file of a test directory"],
  [/\.(test|spec)\.[cm]?[jt]sx?(\.map)?$/, "a test file"],
  [/\.(test|spec)\.d\.[cm]?ts(\.map)?$/, "a test file's declarations"],
  [/(^|\/)(fixtures?|__fixtures__)\//, "a test fixture"],
  [/(^|\/)vitest\.(config|workspace)\.[^/]*$/, "a Vitest config"],
  [/(^|\/)tsconfig[^/]*\.json$/, "a TypeScript config"],
  [/(^|\/)node_modules\//, "an installed dependency"],
  [/\.tgz$/, "a packed tarball"],
  [/(^|\/)\.[^/]*$/, "a dotfile"]
]

/**
 * Every file a tarball may hold; anything else is a problem (a new kind of file is added
 * here on purpose, not shipped by accident).
 */
export const allowed: ReadonlyArray<readonly [RegExp, string]> = [
  [/^package\.json$/, "the manifest"],
  [/^(README|CHANGELOG)\.md$/, "the documentation"],
  [/^LICENSE$/, "the license"],
  [/^dist\/.+\.(js|d\.ts)(\.map)?$/, "the build (modules, declarations, their source maps)"],
  [/^src\/.+\.ts$/, "the sources the source maps point to"],
  [/^samples\/[^/]+\.(sse|md)$/, "the sluice command's sample transcripts"]
]

/**
 * Build output whose source is not beside it: a module deleted from `src/` whose old
 * build `tsc` left in `dist/`. The cli's bundle chunks (`dist/chunks/`) have no source of
 * their own.
 */
const staleBuild = (path: string, paths: ReadonlySet<string>): string | undefined => {
  const match = /^dist\/(.+?)\.(js|d\.ts)(\.map)?$/.exec(path)
  if (match === null || path.startsWith("dist/chunks/")) return undefined
  const source = `src/${match[1]}.ts`
  return paths.has(source) ? undefined : source
}

/** What of a tarball's files may not be published, each with why. */
export const contentProblems = (pkg: string, paths: ReadonlyArray<string>): ReadonlyArray<Problem> => {
  const all = new Set(paths)
  return paths.flatMap((path): ReadonlyArray<Problem> => {
    const deny = denied.find(([pattern]) => pattern.test(path))
    if (deny !== undefined) return [{ pkg, file: path, message: `${deny[1]} is never published` }]
    if (!allowed.some(([pattern]) => pattern.test(path))) {
      return [{ pkg, file: path, message: "not a kind of file a package publishes (see allowed in rules.ts)" }]
    }
    const source = staleBuild(path, all)
    return source === undefined ? [] : [{
      pkg,
      file: path,
      message: `build output with no ${source} beside it: left from a deleted module (remove dist/ and build again)`
    }]
  })
}

// --- versions and internal ranges ----------------------------------------------------

const dependencyFields = ["dependencies", "peerDependencies", "optionalDependencies"] as const

/** A range no registry can resolve: the workspace's own protocols, left unreplaced. */
const localProtocol = /^(workspace|link|file|portal):/

/**
 * The packed manifest's own dependency ranges: every `@sluice/*` one is the release's
 * version, exactly or with a caret, on a public package of the workspace; no range in any
 * field is still a workspace, link or file protocol.
 */
export const rangeProblems = (
  manifest: Manifest,
  scope: string,
  publicNames: ReadonlySet<string>
): ReadonlyArray<Problem> => {
  const pkg = manifest.name
  const problems: Array<Problem> = []
  for (const field of [...dependencyFields, "devDependencies"] as const) {
    for (const [name, range] of Object.entries(manifest[field] ?? {})) {
      if (localProtocol.test(range)) {
        problems.push({ pkg, file: "package.json", message: `${field}.${name} is ${range}, which npm cannot install` })
      }
    }
  }
  for (const field of dependencyFields) {
    for (const [name, range] of Object.entries(manifest[field] ?? {})) {
      if (!name.startsWith(`${scope}/`) || localProtocol.test(range)) continue
      if (!publicNames.has(name)) {
        problems.push({ pkg, file: "package.json", message: `${field}.${name}: not a public package of the workspace` })
      } else if (range !== manifest.version && range !== `^${manifest.version}`) {
        problems.push({
          pkg,
          file: "package.json",
          message:
            `${field}.${name} is ${range}; the packages release together, so it must be ${manifest.version} or ^${manifest.version}`
        })
      }
    }
  }
  return problems
}

/** Every package whose version is not the one most of them have (all of them on a tie). */
export const versionProblems = (manifests: ReadonlyArray<Manifest>): ReadonlyArray<Problem> => {
  const counts = new Map<string, number>()
  for (const { version } of manifests) counts.set(version, (counts.get(version) ?? 0) + 1)
  if (counts.size <= 1) return []
  const top = Math.max(...counts.values())
  const leaders = [...counts].filter(([, count]) => count === top).map(([version]) => version)
  const expected = leaders.length === 1 ? leaders[0] : undefined
  const all = [...counts.keys()].join(", ")
  return manifests.filter(({ version }) => version !== expected).map(({ name, version }) => ({
    pkg: name,
    file: "package.json",
    message: expected === undefined
      ? `version ${version}: the packages have versions ${all}, and must share one`
      : `version ${version}, where the other packages are ${expected}: the packages share one version`
  }))
}

/**
 * `.changeset/config.json` releases the public packages together: one `fixed` group that
 * is exactly them, and `access: public` (a scoped package is otherwise published private).
 */
export const changesetProblems = (
  config: typeof ChangesetConfig.Type,
  publicNames: ReadonlySet<string>
): ReadonlyArray<Problem> => {
  const problem = (message: string): Problem => ({ pkg: "workspace", file: ".changeset/config.json", message })
  const problems: Array<Problem> = []
  if (config.access !== "public") problems.push(problem(`access is ${config.access ?? "unset"}, not public`))
  const groups = config.fixed ?? []
  const group = groups.find((names) => names.some((name) => publicNames.has(name)))
  if (groups.length !== 1 || group === undefined) {
    problems.push(problem(`has ${groups.length} fixed groups: the public packages must be one`))
    return problems
  }
  const listed = new Set(group)
  const missing = [...publicNames].filter((name) => !listed.has(name))
  const extra = group.filter((name) => !publicNames.has(name))
  if (missing.length > 0) problems.push(problem(`the fixed group lacks ${missing.join(", ")}`))
  if (extra.length > 0) problems.push(problem(`the fixed group names ${extra.join(", ")}, not public packages`))
  return problems
}

// --- the changelog and @since tags ---------------------------------------------------

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** The text of a changelog's entry for a version (its `## version` heading to the next), if any. */
export const changelogEntry = (changelog: string, version: string): string | undefined => {
  const heading = new RegExp(`^## v?${escape(version)}(?![\\w.-])`, "m").exec(changelog)
  if (heading === null) return undefined
  const rest = changelog.slice(heading.index + heading[0].length)
  const next = /^## /m.exec(rest)
  return next === null ? rest : rest.slice(0, next.index)
}

/**
 * The changelog has an entry for the package's version, and an entry it has for a release
 * point that exists only as a commit (releasePoints.ts) names that commit.
 */
export const changelogProblems = (
  pkg: string,
  version: string,
  changelog: string | undefined
): ReadonlyArray<Problem> => {
  const file = "CHANGELOG.md"
  if (changelog === undefined) return [{ pkg, file, message: "missing from the tarball" }]
  const problems: Array<Problem> = []
  if (changelogEntry(changelog, version) === undefined) {
    problems.push({ pkg, file, message: `no entry (## ${version}) for the version being released` })
  }
  for (const point of releasePoints) {
    const entry = changelogEntry(changelog, point.version)
    if (entry !== undefined && !entry.includes(shortCommit(point.commit))) {
      problems.push({
        pkg,
        file,
        message: `the ${point.version} entry (${point.summary}) does not name its commit ${shortCommit(point.commit)}`
      })
    }
  }
  return problems
}

/** A version's numbers, when it is a plain `major.minor.patch`. */
const versionNumbers = (version: string): readonly [number, number, number] | undefined => {
  const match = /^(\d+)\.(\d+)\.(\d+)$/.exec(version)
  return match === null ? undefined : [Number(match[1]), Number(match[2]), Number(match[3])]
}

const later = (a: readonly [number, number, number], b: readonly [number, number, number]) =>
  a[0] !== b[0] ? a[0] > b[0] : a[1] !== b[1] ? a[1] > b[1] : a[2] > b[2]

/**
 * Every `@since` tag of the published declarations names a version no later than the
 * package's own: an API cannot have arrived in a version after the one that ships it.
 * One problem per file and tag, with the lines it is on.
 */
export const sinceProblems = (
  pkg: string,
  version: string,
  files: ReadonlyArray<PackedFile>
): ReadonlyArray<Problem> => {
  const own = versionNumbers(version.replace(/[-+].*$/, ""))
  if (own === undefined) return [{ pkg, file: "package.json", message: `version ${version} is not major.minor.patch` }]
  const decoder = new TextDecoder()
  return files.filter(({ path }) => /^dist\/.+\.d\.ts$/.test(path)).flatMap(({ data, path }) => {
    const wrong = new Map<string, Array<number>>()
    decoder.decode(data).split("\n").forEach((line, index) => {
      const since = /@since\s+(\S+)/.exec(line)?.[1]
      if (since === undefined) return
      const numbers = versionNumbers(since)
      if (numbers !== undefined && !later(numbers, own)) return
      wrong.set(since, [...wrong.get(since) ?? [], index + 1])
    })
    return [...wrong].map(([since, lines]) => ({
      pkg,
      file: path,
      message: `@since ${since} (line ${lines.join(", ")}) ${
        versionNumbers(since) === undefined ? "is not a version" : `is later than the package's version ${version}`
      }`
    }))
  })
}
