/**
 * `scripts/release/since.ts` on a git repository this test makes under the system's
 * temporary directory: two packages, a commit for 0.1.0 and one for 0.2.0, and a working
 * tree whose tags are wrong in every way the tool knows (a later version, an earlier one,
 * none, a module header, a name moved to another package). The report names each, `fix`
 * rewrites them, and without the history (no repository, a commit missing) it skips.
 */
import { execFile, execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterEach, describe, expect, it } from "vitest"
import { audit, fix, type Point, workingVersion } from "../release/since.js"

const run = promisify(execFile)
const repository = fileURLToPath(new URL("../../", import.meta.url))

const made: Array<string> = []
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const temp = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-since-fixture-"))
  made.push(dir)
  return dir
}

/** Writes the files; `null` deletes one. */
const write = (root: string, files: Record<string, string | null>): void => {
  for (const [path, text] of Object.entries(files)) {
    if (text === null) {
      rmSync(join(root, path))
    } else {
      mkdirSync(dirname(join(root, path)), { recursive: true })
      writeFileSync(join(root, path), text)
    }
  }
}

const git = (root: string, ...args: ReadonlyArray<string>): string =>
  execFileSync("git", ["-C", root, ...args], { encoding: "utf8", stdio: "pipe" }).trim()

const commit = (root: string, message: string): string => {
  git(root, "add", ".")
  git(
    root,
    "-c",
    "user.name=since test",
    "-c",
    "user.email=since@example.invalid",
    "-c",
    "commit.gpgsign=false",
    "commit",
    "-q",
    "--no-verify",
    "-m",
    message
  )
  return git(root, "rev-parse", "HEAD")
}

const manifest = (name: string) => JSON.stringify({ name, version: "0.2.0" })

/** A JSDoc comment with the given lines. */
const doc = (...lines: ReadonlyArray<string>) => `/**\n${lines.map((line) => ` * ${line}`.trimEnd()).join("\n")}\n */\n`

/**
 * A repository with a commit of each of the given sets of files (each written over the
 * last commit's), then the working tree's written over the last: its root, and the
 * commits as the points 0.1.0, 0.2.0, ...
 */
const makeRepository = (
  commits: ReadonlyArray<Record<string, string | null>>,
  tree: Record<string, string | null>
): { readonly root: string; readonly points: ReadonlyArray<Point> } => {
  const root = temp()
  git(root, "init", "-q")
  const points = commits.map((files, index) => {
    write(root, files)
    return { version: `0.${index + 1}.0`, commit: commit(root, `0.${index + 1}.0`) }
  })
  write(root, tree)
  return { root, points }
}

/**
 * The repository: `@x/a` with `A.ts` (and `Moved.ts` until 0.2.0), `B.ts` from 0.2.0;
 * `@x/b` from the working tree on, with `Moved.ts`.
 */
const fixture = (): { readonly root: string; readonly points: ReadonlyArray<Point> } =>
  makeRepository([
    {
      "packages/a/package.json": manifest("@x/a"),
      "packages/a/src/index.ts": `${doc("@x/a", "", "@since 0.1.0")}\n${
        doc("@since 0.1.0")
      }export * as A from "./A.js"\n\n${doc("@since 0.1.0")}export * as Moved from "./Moved.js"\n`,
      "packages/a/src/A.ts": `${doc("A.", "", "@since 0.1.0")}\n${doc("@since 0.1.0")}export const one = 1\n\n${
        doc("@since 0.1.0")
      }export interface Shape {\n  readonly size: number\n}\n`,
      "packages/a/src/Moved.ts": `${doc("Moved.", "", "@since 0.1.0")}\n${doc("@since 0.1.0")}export const moved = 0\n`
    },
    {
      "packages/a/src/index.ts": `${doc("@x/a", "", "@since 0.1.0")}\n${
        doc("@since 0.1.0")
      }export * as A from "./A.js"\n\n${doc("@since 0.2.0")}export * as B from "./B.js"\n`,
      "packages/a/src/A.ts": `${doc("A.", "", "@since 0.1.0")}\n${doc("@since 0.1.0")}export const one = 1\n\n${
        doc("@since 0.2.0")
      }export const two = 2\n\n${doc("@since 0.1.0")}export interface Shape {\n  readonly size: number\n}\n`,
      "packages/a/src/B.ts": `${doc("B.", "", "@since 0.2.0")}\n${doc("@since 0.2.0")}export type B = string\n`,
      "packages/a/src/Moved.ts": null
    }
  ], {
    "packages/a/src/A.ts": [
      doc("A.", "", "@since 0.1.0"),
      doc("@since 0.2.0"),
      "export const one = 1\n\n",
      doc("@since 0.1.0", "@category constants"),
      "export const two = 2\n\n",
      "export function three(): number {\n  return 3\n}\n\n",
      doc("The shape.", "", "@category models"),
      "export interface Shape {\n  readonly size: number\n}\n\n",
      "/** One, again. */\n",
      "export { one as uno }\n\n",
      "export type {\n  /**\n   * @since 0.2.0\n   */\n  Shape as Form\n}\n"
    ].join(""),
    "packages/a/src/B.ts": `${doc("B.", "", "@since 0.1.0")}\n${doc("@since 0.2.0")}export type B = string\n`,
    "packages/a/src/internal/hidden.ts": "export const hidden = 0\n",
    "packages/b/package.json": manifest("@x/b"),
    "packages/b/src/index.ts": `${doc("@x/b", "", "@since 0.1.0")}\n${
      doc("@since 0.1.0")
    }export * as Moved from "./Moved.js"\n`,
    "packages/b/src/Moved.ts": `${doc("Moved.", "", "@since 0.1.0")}\n${doc("@since 0.1.0")}export const moved = 0\n`
  })

describe("since", () => {
  it("reports every tag that disagrees with the history, and an export with none", () => {
    const { points, root } = fixture()
    const result = audit(root, { points, version: "0.3.0" })
    if (result._tag !== "Audited") throw new Error(result.reason)
    expect(result.version).toBe("0.3.0")
    expect(
      result.problems.map(({ file, has, line, name, pkg, wants }) => ({ pkg, file, line, name, has, wants }))
    ).toStrictEqual([
      { pkg: "@x/a", file: "packages/a/src/A.ts", line: 9, name: "one", has: "0.2.0", wants: "0.1.0" },
      { pkg: "@x/a", file: "packages/a/src/A.ts", line: 15, name: "two", has: "0.1.0", wants: "0.2.0" },
      { pkg: "@x/a", file: "packages/a/src/A.ts", line: 17, name: "three", has: undefined, wants: "0.3.0" },
      { pkg: "@x/a", file: "packages/a/src/A.ts", line: 26, name: "Shape", has: undefined, wants: "0.1.0" },
      { pkg: "@x/a", file: "packages/a/src/A.ts", line: 31, name: "uno", has: undefined, wants: "0.3.0" },
      { pkg: "@x/a", file: "packages/a/src/A.ts", line: 37, name: "Form", has: "0.2.0", wants: "0.3.0" },
      { pkg: "@x/a", file: "packages/a/src/B.ts", line: 4, name: "B (module header)", has: "0.1.0", wants: "0.2.0" },
      // the package and the module are new in the working tree: moving them is new
      {
        pkg: "@x/b",
        file: "packages/b/src/Moved.ts",
        line: 4,
        name: "Moved (module header)",
        has: "0.1.0",
        wants: "0.3.0"
      },
      { pkg: "@x/b", file: "packages/b/src/Moved.ts", line: 10, name: "moved", has: "0.1.0", wants: "0.3.0" },
      {
        pkg: "@x/b",
        file: "packages/b/src/index.ts",
        line: 4,
        name: "index.ts (module header)",
        has: "0.1.0",
        wants: "0.3.0"
      },
      { pkg: "@x/b", file: "packages/b/src/index.ts", line: 10, name: "Moved", has: "0.1.0", wants: "0.3.0" }
    ])
    expect(result.problems[2]?.message).toBe("has no @since, wants 0.3.0")
    expect(result.problems[0]?.message).toBe("has @since 0.2.0, wants 0.1.0")
  }, 60_000)

  it("--fix rewrites the tags in place, adding the missing ones, and then the audit is clean", () => {
    const { points, root } = fixture()
    const fixed = fix(root, { points, version: "0.3.0" })
    if (fixed._tag !== "Fixed") throw new Error(fixed.reason)
    expect(fixed.changes.map(({ from, name, to }) => `${name}: ${from ?? "none"} -> ${to}`)).toStrictEqual([
      "one: 0.2.0 -> 0.1.0",
      "two: 0.1.0 -> 0.2.0",
      "three: none -> 0.3.0",
      "Shape: none -> 0.1.0",
      "uno: none -> 0.3.0",
      "Form: 0.2.0 -> 0.3.0",
      "B (module header): 0.1.0 -> 0.2.0",
      "Moved (module header): 0.1.0 -> 0.3.0",
      "moved: 0.1.0 -> 0.3.0",
      "index.ts (module header): 0.1.0 -> 0.3.0",
      "Moved: 0.1.0 -> 0.3.0"
    ])
    expect(fixed.problems).toStrictEqual([])
    expect(readFileSync(join(root, "packages/a/src/A.ts"), "utf8")).toBe(
      [
        doc("A.", "", "@since 0.1.0"),
        doc("@since 0.1.0"),
        "export const one = 1\n\n",
        doc("@since 0.2.0", "@category constants"),
        "export const two = 2\n\n",
        doc("@since 0.3.0"),
        "export function three(): number {\n  return 3\n}\n\n",
        doc("The shape.", "", "@since 0.1.0", "@category models"),
        "export interface Shape {\n  readonly size: number\n}\n\n",
        doc("One, again.", "", "@since 0.3.0"),
        "export { one as uno }\n\n",
        "export type {\n  /**\n   * @since 0.3.0\n   */\n  Shape as Form\n}\n"
      ].join("")
    )
    expect(readFileSync(join(root, "packages/a/src/internal/hidden.ts"), "utf8")).toBe("export const hidden = 0\n")
    const again = audit(root, { points, version: "0.3.0" })
    expect(again._tag === "Audited" ? again.problems : again.reason).toStrictEqual([])
  }, 60_000)

  it("one tag over names of different versions: reported, left as it is by --fix", () => {
    const { points, root } = makeRepository(
      [{
        "packages/a/package.json": manifest("@x/a"),
        "packages/a/src/C.ts": `${doc("@since 0.1.0")}export const c = 1\n`
      }],
      { "packages/a/src/C.ts": `${doc("@since 0.1.0")}export const c = 1, d = 2\n` }
    )
    const problems = [{
      pkg: "@x/a",
      file: "packages/a/src/C.ts",
      line: 4,
      name: "c, d",
      has: "0.1.0",
      wants: "0.1.0 / 0.2.0",
      message: "one tag for names of different versions (c 0.1.0, d 0.2.0): export them in separate declarations"
    }]
    expect(audit(root, { points, version: "0.2.0" })).toStrictEqual({
      _tag: "Audited",
      version: "0.2.0",
      checked: 1,
      problems
    })
    expect(fix(root, { points, version: "0.2.0" })).toStrictEqual({
      _tag: "Fixed",
      version: "0.2.0",
      changes: [],
      problems
    })
  }, 60_000)

  it("says plainly and skips when a point's commit is not in the clone, or there is no repository", () => {
    const { points, root } = fixture()
    const missing = "0123456789abcdef0123456789abcdef01234567"
    const result = audit(root, { points: [...points, { version: "0.2.5", commit: missing }], version: "0.3.0" })
    expect(result).toStrictEqual({
      _tag: "Skipped",
      reason: `the commit of 0.2.5 (${missing}) is not in this clone; the @since tags were not checked`
    })
    const plain = temp()
    const outside = fix(plain, { points, version: "0.3.0" })
    expect(outside._tag).toBe("Skipped")
    expect(outside._tag === "Skipped" ? outside.reason : "").toContain("is not a git repository")
  }, 60_000)

  it("the command: the report and exit 1, --fix and exit 0, the reason and exit 0 without the history", async () => {
    const tsx = join(repository, "node_modules", ".bin", "tsx")
    const script = join(repository, "scripts", "release", "since.ts")
    const { points, root } = fixture()
    const args = [
      script,
      "--root",
      root,
      "--version",
      "0.3.0",
      ...points.flatMap((point) => ["--point", `${point.version}=${point.commit}`])
    ]
    const report = await run(tsx, args).then(
      () => ({ code: 0, stdout: "" }),
      (error: { readonly code: number; readonly stdout: string }) => ({ code: error.code, stdout: error.stdout })
    )
    expect(report.code).toBe(1)
    expect(report.stdout).toContain("packages/a/src/A.ts:9 @x/a one: has @since 0.2.0, wants 0.1.0\n")
    expect(report.stdout).toContain("16 tags checked, 11 disagree")
    const fixed = await run(tsx, [...args, "--fix"])
    expect(fixed.stdout).toContain("11 tags rewritten")
    expect(fixed.stdout).toContain("  none -> 0.3.0: 2\n")
    expect((await run(tsx, args)).stdout).toContain("16 tags checked, 0 disagree")
    // the fixture's repository holds none of the real release points' commits
    const skipped = await run(tsx, [script, "--root", root])
    expect(skipped.stdout).toContain("is not in this clone")
    expect(skipped.stdout).toContain("the @since tags were not checked")
  }, 120_000)

  it("the working tree's version: the packages' own once later than every point, else the next minor", () => {
    const points = [{ version: "0.1.0", commit: "a" }, { version: "0.2.0", commit: "b" }]
    expect(workingVersion(points, ["0.2.0", "0.2.0"])).toBe("0.3.0")
    expect(workingVersion(points, ["0.3.0"])).toBe("0.3.0")
    expect(workingVersion(points, ["0.2.1"])).toBe("0.2.1")
    expect(workingVersion([], [])).toBe("0.1.0")
  }, 10_000)
})
