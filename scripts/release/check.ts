/**
 * `pnpm release:check`: every public package of a workspace (`packages/*`, those not
 * `private`) packed with `pnpm pack` as it would be published (pnpm applies
 * `publishConfig` and replaces `workspace:` ranges), and each tarball held to the rules:
 *
 * - its files are on the allow list and on no deny list, and its build has no module
 *   whose source is gone (rules.ts: contentProblems);
 * - attw resolves every entry point's types and code under node16 (from ESM) and bundler
 *   (linters.ts: typeProblems);
 * - publint has nothing to say (linters.ts: lintProblems);
 * - its version is every other package's, and its `@sluice/*` ranges are that version or
 *   `^` it (rules.ts: versionProblems, rangeProblems); `.changeset/config.json` releases
 *   the packages as one fixed group (changesetProblems);
 * - its CHANGELOG.md has an entry for the version (changelogProblems), and no `@since`
 *   tag names a later version (sinceProblems);
 * - with the repository's history at hand, every export's `@since` in `packages/*\/src` is
 *   the first release point that had it (since.ts: audit); without it, a note says so.
 *
 * It packs what is built: run `pnpm build` first (`pnpm install` does).
 */
import { pack, unpack } from "@publint/pack"
import * as Schema from "effect/Schema"
import { existsSync } from "node:fs"
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { lintProblems, typeProblems } from "./linters.js"
import {
  changelogProblems,
  changesetProblems,
  contentProblems,
  decodeChangesetConfig,
  decodeManifest,
  type Manifest,
  type PackedFile,
  type Problem,
  rangeProblems,
  sinceProblems,
  versionProblems
} from "./rules.js"
import { audit } from "./since.js"

/** What to check. */
export interface CheckOptions {
  /** The workspace's root: it holds `packages/*` and `.changeset/config.json`. */
  readonly root: string
  /** The scope of the workspace's packages, whose ranges must be the release's version. */
  readonly scope?: string
  /** How many packages are packed at once (default 4: packing waits on pnpm more than on the CPU). */
  readonly concurrency?: number
}

/** One package as packed. */
export interface PackedPackage {
  readonly name: string
  readonly version: string
  /** Its directory, from the workspace's root (`packages/core`). */
  readonly dir: string
  /** How many files its tarball holds. */
  readonly files: number
  /** The tarball's size in bytes. */
  readonly bytes: number
}

/** What the check found. */
export interface Report {
  readonly packages: ReadonlyArray<PackedPackage>
  readonly problems: ReadonlyArray<Problem>
  /** What was not checked, and why (the `@since` history without the git history). */
  readonly notes: ReadonlyArray<string>
  readonly milliseconds: number
}

const JsonObject = Schema.fromJsonString(Schema.Record(Schema.String, Schema.Unknown))
const decodeJsonObject = Schema.decodeUnknownSync(JsonObject)

const message = (cause: unknown) => cause instanceof Error ? cause.message : String(cause)

/** Runs `f` over `items`, at most `limit` at a time, results in the items' order. */
const mapLimit = async <A, B>(
  items: ReadonlyArray<A>,
  limit: number,
  f: (item: A) => Promise<B>
): Promise<ReadonlyArray<B>> => {
  const results: Array<B> = []
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++
      const item = items[index]
      if (item !== undefined) results[index] = await f(item)
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker))
  return results
}

interface Workspace {
  readonly dir: string
  readonly manifest: Manifest
}

/** The packages of `<root>/packages/*`, by directory name. */
const workspacePackages = async (root: string): Promise<ReadonlyArray<Workspace>> => {
  const packagesDir = join(root, "packages")
  const names = (await readdir(packagesDir, { withFileTypes: true }))
    .filter((entry) => entry.isDirectory() && existsSync(join(packagesDir, entry.name, "package.json")))
    .map((entry) => entry.name)
    .sort()
  return Promise.all(names.map(async (name) => ({
    dir: join("packages", name),
    manifest: decodeManifest(await readFile(join(packagesDir, name, "package.json"), "utf8"))
  })))
}

interface Checked {
  readonly packed: PackedPackage | undefined
  readonly manifest: Manifest | undefined
  readonly problems: ReadonlyArray<Problem>
}

/** Packs one package into `into` and checks its tarball on its own. */
const checkOne = async (
  root: string,
  workspace: Workspace,
  into: string,
  scope: string,
  publicNames: ReadonlySet<string>
): Promise<Checked> => {
  const pkg = workspace.manifest.name
  const dir = join(root, workspace.dir)
  if (!existsSync(join(dir, "dist"))) {
    return {
      packed: undefined,
      manifest: undefined,
      problems: [{ pkg, file: `${workspace.dir}/dist`, message: "not built: run pnpm build first" }]
    }
  }
  let tarball: Uint8Array
  try {
    tarball = new Uint8Array(await readFile(await pack(dir, { packageManager: "pnpm", destination: into })))
  } catch (cause) {
    return {
      packed: undefined,
      manifest: undefined,
      problems: [{ pkg, file: workspace.dir, message: `pnpm pack failed: ${message(cause)}` }]
    }
  }
  const { files: raw, rootDir } = await unpack(tarball)
  const files: ReadonlyArray<PackedFile> = raw.map(({ data, name }) => ({
    path: name.slice(rootDir.length + 1),
    data
  }))
  const paths = files.map(({ path }) => path)
  const text = (path: string) => {
    const file = files.find((candidate) => candidate.path === path)
    return file === undefined ? undefined : new TextDecoder().decode(file.data)
  }
  const manifestText = text("package.json") ?? "{}"
  let manifest: Manifest
  let manifestObject: Record<string, unknown>
  try {
    manifest = decodeManifest(manifestText)
    manifestObject = decodeJsonObject(manifestText)
  } catch (cause) {
    return {
      packed: undefined,
      manifest: undefined,
      problems: [{ pkg, file: "package.json", message: `the packed manifest is not one: ${message(cause)}` }]
    }
  }
  const problems = [
    ...contentProblems(pkg, paths),
    ...rangeProblems(manifest, scope, publicNames),
    ...changelogProblems(pkg, manifest.version, text("CHANGELOG.md")),
    ...sinceProblems(pkg, manifest.version, files),
    ...await typeProblems(pkg, tarball, manifest.exports, paths),
    ...await lintProblems(pkg, tarball, manifestObject)
  ]
  return {
    packed: { name: pkg, version: manifest.version, dir: workspace.dir, files: files.length, bytes: tarball.length },
    manifest,
    problems
  }
}

/** Packs and checks every public package of the workspace. */
export const releaseCheck = async (options: CheckOptions): Promise<Report> => {
  const started = performance.now()
  const scope = options.scope ?? "@sluice"
  const workspaces = (await workspacePackages(options.root)).filter(({ manifest }) => manifest.private !== true)
  const publicNames = new Set(workspaces.map(({ manifest }) => manifest.name))
  const problems: Array<Problem> = []

  const configPath = join(options.root, ".changeset", "config.json")
  try {
    problems.push(...changesetProblems(decodeChangesetConfig(await readFile(configPath, "utf8")), publicNames))
  } catch (cause) {
    problems.push({ pkg: "workspace", file: ".changeset/config.json", message: message(cause) })
  }

  const into = await mkdtemp(join(tmpdir(), "sluice-release-check-"))
  try {
    const checked = await mapLimit(
      workspaces,
      options.concurrency ?? 4,
      async (workspace) => {
        const own = await mkdtemp(join(into, "pack-"))
        return checkOne(options.root, workspace, own, scope, publicNames)
      }
    )
    problems.push(...checked.flatMap((one) => one.problems))
    problems.push(...versionProblems(checked.flatMap(({ manifest }) => manifest === undefined ? [] : [manifest])))
    const notes: Array<string> = []
    try {
      const history = audit(options.root)
      if (history._tag === "Skipped") notes.push(`@since tags not checked against the history: ${history.reason}`)
      else {
        problems.push(...history.problems.map(({ file, line, message, name, pkg }) => ({
          pkg,
          file: `${file}:${line}`,
          message: `${name}: ${message}`
        })))
      }
    } catch (cause) {
      problems.push({
        pkg: "workspace",
        file: "scripts/release/since.ts",
        message: `the @since audit failed: ${message(cause)}`
      })
    }
    return {
      packages: checked.flatMap(({ packed }) => packed === undefined ? [] : [packed]),
      problems,
      notes,
      milliseconds: performance.now() - started
    }
  } finally {
    await rm(into, { recursive: true, force: true })
  }
}

/** The report as lines for a terminal: each problem with its package and file, then a summary. */
export const formatReport = (report: Report): string => {
  const versions = [...new Set(report.packages.map(({ version }) => version))].join(", ")
  const seconds = (report.milliseconds / 1000).toFixed(1)
  const lines = report.problems.map(({ file, message, pkg }) => `  ${pkg} ${file}: ${message}`)
  const summary = report.problems.length === 0
    ? `release:check: ${report.packages.length} packages at ${versions} packed and clean (${seconds} s)`
    : `release:check: ${report.problems.length} problems in ${report.packages.length} packages at ${versions} (${seconds} s)`
  return [...lines, ...report.notes.map((note) => `note: ${note}`), summary].join("\n")
}
