/**
 * `pnpm release:check` on workspaces this test makes: two or three small `@sluice/*`
 * packages under the system's temporary directory, installed offline (nothing to fetch)
 * so `pnpm pack` can replace their `workspace:` ranges. A clean workspace passes; a
 * tarball with a test file in it fails, naming the file, and so do build info, a version
 * that differs from the others and a `@since` later than the version. The repository's
 * own packages are checked by `pnpm release:check` itself, not here.
 */
import { execFile } from "node:child_process"
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterEach, describe, expect, it } from "vitest"
import { releaseCheck } from "../release/check.js"
import { patternSubpaths } from "../release/linters.js"
import { changelogProblems, contentProblems } from "../release/rules.js"

const run = promisify(execFile)
const repository = fileURLToPath(new URL("../../", import.meta.url))

/** One package of a made workspace. */
interface Fixture {
  readonly name: string
  readonly version: string
  readonly dependencies?: Record<string, string>
  /** The `@since` of its one export (default: its version). */
  readonly since?: string
  /** More files, by path in the package: what the tests slip into a tarball. */
  readonly extra?: Record<string, string>
}

const made: Array<string> = []
afterEach(async () => {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
})

const write = async (path: string, text: string) => {
  await mkdir(dirname(path), { recursive: true })
  await writeFile(path, text)
}

/**
 * A pnpm workspace of the packages, each as a Sluice package is laid out (ESM, `exports`
 * with types, `dist/` beside its `src/`, README, CHANGELOG with an entry for its version,
 * LICENSE), its `.changeset/config.json` releasing them as one fixed group, installed.
 */
const workspace = async (packages: ReadonlyArray<Fixture>): Promise<string> => {
  const root = await mkdtemp(join(tmpdir(), "sluice-release-fixture-"))
  made.push(root)
  await write(join(root, "package.json"), JSON.stringify({ name: "fixture", private: true }))
  await write(join(root, "pnpm-workspace.yaml"), "packages:\n  - \"packages/*\"\n")
  await write(
    join(root, ".changeset", "config.json"),
    JSON.stringify({ access: "public", fixed: [packages.map(({ name }) => name)] })
  )
  for (const pkg of packages) {
    const dir = join(root, "packages", pkg.name.replace(/^@sluice\//, ""))
    const manifest = {
      name: pkg.name,
      version: pkg.version,
      description: "A package made by the release check's test.",
      type: "module",
      license: "MIT",
      sideEffects: false,
      exports: { ".": { types: "./dist/index.d.ts", import: "./dist/index.js" } },
      files: ["dist", "src", "README.md", "CHANGELOG.md", "LICENSE"],
      ...(pkg.dependencies === undefined ? {} : { dependencies: pkg.dependencies })
    }
    const declaration = `/**\n * The answer.\n *\n * @since ${pkg.since ?? pkg.version}\n */\n`
    const files: Record<string, string> = {
      "package.json": JSON.stringify(manifest, null, 2),
      "src/index.ts": `${declaration}export const answer = 42\n`,
      "dist/index.js": "export const answer = 42;\n",
      "dist/index.d.ts": `${declaration}export declare const answer = 42;\n`,
      "README.md": `# ${pkg.name}\n`,
      "CHANGELOG.md": `# ${pkg.name}\n\n## ${pkg.version}\n\n- The answer.\n`,
      "LICENSE": "MIT License\n",
      ...pkg.extra
    }
    for (const [path, text] of Object.entries(files)) await write(join(dir, path), text)
  }
  // links the packages so `pnpm pack` can replace `workspace:` ranges; nothing to fetch,
  // and no lockfile to hold to (pnpm would require one under CI=true)
  await run("pnpm", ["install", "--offline", "--no-frozen-lockfile", "--silent"], { cwd: root })
  return root
}

const clean: ReadonlyArray<Fixture> = [
  { name: "@sluice/a", version: "0.3.0" },
  { name: "@sluice/b", version: "0.3.0", dependencies: { "@sluice/a": "workspace:*" } },
  { name: "@sluice/c", version: "0.3.0", dependencies: { "@sluice/a": "workspace:^" } }
]

describe("release:check", () => {
  it("passes a workspace whose tarballs hold what a package publishes", async () => {
    const report = await releaseCheck({ root: await workspace(clean) })
    expect(report.problems).toEqual([])
    // a made workspace has no history to check the @since tags against: said, not failed
    expect(report.notes).toEqual([expect.stringContaining("is not a git repository")])
    expect(report.packages.map(({ name, version }) => `${name}@${version}`)).toEqual([
      "@sluice/a@0.3.0",
      "@sluice/b@0.3.0",
      "@sluice/c@0.3.0"
    ])
  }, 180_000) // measured 4-9 s: three packs, attw and publint on each, on the busy 2-core machine

  it("fails on a tarball with a test file in it, naming the package and the file", async () => {
    const root = await workspace([
      { name: "@sluice/a", version: "0.3.0", extra: { "dist/index.test.js": "export {};\n" } },
      { name: "@sluice/b", version: "0.3.0", dependencies: { "@sluice/a": "workspace:*" } }
    ])
    // the command as `pnpm release:check` runs it, on the made workspace
    const failed = await run(process.execPath, ["--import", "tsx", "scripts/release/releaseCheck.ts", root], {
      cwd: repository
    }).then(
      () => undefined,
      (error: unknown) => error
    )
    expect(failed).toMatchObject({ code: 1 })
    const stderr = failed instanceof Error && "stderr" in failed ? String(failed.stderr) : ""
    expect(stderr.split("\n").filter((line) => line.startsWith("  "))).toEqual([
      "  @sluice/a dist/index.test.js: a test file is never published"
    ])
  }, 180_000)

  it("fails on build info, a version apart from the others and a @since after the version", async () => {
    const report = await releaseCheck({
      root: await workspace([
        { name: "@sluice/a", version: "1.2.0", extra: { "dist/tsconfig.tsbuildinfo": "{}\n" } },
        { name: "@sluice/b", version: "1.2.0", since: "1.3.0", dependencies: { "@sluice/a": "workspace:*" } },
        { name: "@sluice/c", version: "1.1.0", dependencies: { "@sluice/a": "workspace:*" } }
      ])
    })
    expect(report.problems.map(({ file, pkg }) => `${pkg} ${file}`).sort()).toEqual([
      "@sluice/a dist/tsconfig.tsbuildinfo",
      "@sluice/b dist/index.d.ts",
      // its range on a (a's version, 1.2.0) is not its own version, and the version is not the others'
      "@sluice/c package.json",
      "@sluice/c package.json"
    ])
    expect(report.problems.map(({ message }) => message)).toEqual(expect.arrayContaining([
      "TypeScript build info is never published",
      "@since 1.3.0 (line 4) is later than the package's version 1.2.0",
      "version 1.1.0, where the other packages are 1.2.0: the packages share one version"
    ]))
  }, 180_000)
})

describe("release rules", () => {
  it("opens every module a subpath pattern reaches, less those a null key closes", () => {
    const exports = {
      ".": { types: "./dist/index.d.ts", import: "./dist/index.js" },
      "./*": { types: "./dist/*.d.ts", import: "./dist/*.js" },
      "./internal/*": null,
      "./chunks/*": null
    }
    const paths = [
      "dist/index.js",
      "dist/Sse.js",
      "dist/Sse.d.ts",
      "dist/internal/x.js",
      "dist/chunks/c-1.js",
      "README.md"
    ]
    expect(patternSubpaths(exports, paths)).toEqual(["./Sse", "./index"])
  }, 10_000)

  it("refuses a file off the allow list, and a build whose source is gone", () => {
    const paths = [
      "package.json",
      "README.md",
      "src/Sse.ts",
      "dist/Sse.js",
      "dist/Sse.d.ts.map",
      "dist/Gone.js",
      "dist/chunks/chunk-1.js",
      "notes.txt"
    ]
    expect(contentProblems("@sluice/a", paths).map(({ file, message }) => `${file}: ${message}`)).toEqual([
      "dist/Gone.js: build output with no src/Gone.ts beside it: left from a deleted module (remove dist/ and build again)",
      "notes.txt: not a kind of file a package publishes (see allowed in rules.ts)"
    ])
  }, 10_000)

  it("wants the version's entry, and a pre-publication entry to name its commit", () => {
    const changelog = "# @sluice/a\n\n## 0.3.0\n\n- Now.\n\n## 0.2.0\n\nThe Effect 4 port.\n\n## 0.1.0\n\nAt 83f3783.\n"
    expect(changelogProblems("@sluice/a", "0.3.0", changelog)).toEqual([{
      pkg: "@sluice/a",
      file: "CHANGELOG.md",
      message: "the 0.2.0 entry (the port to Effect 4) does not name its commit 1349da7"
    }])
    expect(changelogProblems("@sluice/a", "0.4.0", changelog).map(({ message }) => message)).toContain(
      "no entry (## 0.4.0) for the version being released"
    )
  }, 10_000)
})
