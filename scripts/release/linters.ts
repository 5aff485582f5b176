/**
 * The two well-kept packaging linters `pnpm release:check` runs on each tarball:
 * `@arethetypeswrong/core` (the library behind `@arethetypeswrong/cli`), which resolves
 * every entry point's types and code as TypeScript and Node do, and `publint`, which
 * lints the packed `package.json` against the files the tarball holds.
 */
import { checkPackage, createPackageFromTarballData } from "@arethetypeswrong/core"
import { problemKindInfo } from "@arethetypeswrong/core/problems"
import type { ProblemKind, ResolutionKind } from "@arethetypeswrong/core/types"
import { publint } from "publint"
import { formatMessage } from "publint/utils"
import type { Problem } from "./rules.js"

/**
 * The resolutions a Sluice package must pass: `moduleResolution: node16` (or `nodenext`)
 * importing it from an ES module, and `bundler`. This is the CLI's `esm-only` profile.
 * The packages are ES modules only (`"type": "module"`, exports with `import` and `types`
 * and no `require`), so the other two are not theirs to pass: `node10` ignores `exports`
 * and so cannot see a subpath, and `node16` from CommonJS reaches them only by a dynamic
 * `import()` (attw's CJSResolvesToESM).
 */
export const resolutionKinds: ReadonlyArray<ResolutionKind> = ["node16-esm", "bundler"]

/** The first string target of an exports entry that is code, not declarations. */
const codeTarget = (value: unknown): string | undefined => {
  if (typeof value === "string") return /\.d\.[cm]?ts$/.test(value) ? undefined : value
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined
  for (const inner of Object.values(value)) {
    const target = codeTarget(inner)
    if (target !== undefined) return target
  }
  return undefined
}

/** The exports map's subpath keys with their values, or none when it is not a subpath map. */
const subpathEntries = (exports: unknown): ReadonlyArray<readonly [string, unknown]> =>
  exports !== null && typeof exports === "object" && !Array.isArray(exports)
    ? Object.entries(exports).filter(([key]) => key.startsWith("."))
    : []

/**
 * The key of an exports map that Node picks for a subpath: the exact key, else of the
 * patterns that match it the one with the longest text before its `*`.
 */
const pickKey = (keys: ReadonlyArray<string>, subpath: string): string | undefined => {
  if (keys.includes(subpath)) return subpath
  const matching = keys.filter((key) => {
    const star = key.indexOf("*")
    if (star < 0) return false
    const before = key.slice(0, star)
    const after = key.slice(star + 1)
    return subpath.length >= before.length + after.length && subpath.startsWith(before) && subpath.endsWith(after)
  })
  return matching.sort((a, b) => b.indexOf("*") - a.indexOf("*") || b.length - a.length)[0]
}

/**
 * Every subpath a pattern of the exports map (`"./*": "./dist/*.js"`) opens onto a file
 * of the tarball, less those a more specific key closes (`"./internal/*": null`). attw
 * checks a pattern only when told its subpaths, so each is named.
 */
export const patternSubpaths = (exports: unknown, paths: ReadonlyArray<string>): ReadonlyArray<string> => {
  const entries = subpathEntries(exports)
  const keys = entries.map(([key]) => key)
  const values = new Map(entries)
  const subpaths = new Set<string>()
  for (const [key, value] of entries) {
    const target = codeTarget(value)
    if (!key.includes("*") || target === undefined || !target.includes("*")) continue
    const [before = "", after = ""] = target.replace(/^\.\//, "").split("*")
    for (const path of paths) {
      if (path.length < before.length + after.length || !path.startsWith(before) || !path.endsWith(after)) continue
      const subpath = key.replace("*", path.slice(before.length, path.length - after.length))
      const picked = pickKey(keys, subpath)
      if (picked === key && values.get(picked) !== null) subpaths.add(subpath)
    }
  }
  return [...subpaths].sort()
}

/**
 * attw on a tarball: each entry point (the exports map's own, and every subpath its
 * patterns open) resolves to types and code that agree, under node16 from ESM and bundler.
 */
export const typeProblems = async (
  pkg: string,
  tarball: Uint8Array,
  exports: unknown,
  paths: ReadonlyArray<string>
): Promise<ReadonlyArray<Problem>> => {
  const analysis = await checkPackage(createPackageFromTarballData(tarball), {
    includeEntrypoints: [...patternSubpaths(exports, paths)]
  })
  if (analysis.types === false) return [{ pkg, file: "package.json", message: "attw: the package has no types" }]
  // one problem per kind and place, with the resolutions it fails under
  const found = new Map<string, { readonly kind: ProblemKind; readonly where: string; readonly under: Array<string> }>()
  for (const problem of analysis.problems) {
    if ("resolutionKind" in problem && !resolutionKinds.includes(problem.resolutionKind)) continue
    const where = "entrypoint" in problem
      ? problem.entrypoint === "." ? pkg : `${pkg}/${problem.entrypoint.slice(2)}`
      : "fileName" in problem
      ? problem.fileName
      : `${problem.typesFileName} and ${problem.implementationFileName}`
    const key = `${problem.kind} ${where}`
    const entry = found.get(key) ?? { kind: problem.kind, where, under: [] }
    if ("resolutionKind" in problem) entry.under.push(problem.resolutionKind)
    found.set(key, entry)
  }
  return [...found.values()].map(({ kind, under, where }) => ({
    pkg,
    file: "package.json",
    message: `attw ${kind}: ${problemKindInfo[kind].shortDescription}: ${where}${
      under.length > 0 ? ` under ${under.join(" and ")}` : ""
    } (${problemKindInfo[kind].docsUrl})`
  }))
}

/** publint on a tarball, every message (errors, warnings and suggestions) a problem. */
export const lintProblems = async (
  pkg: string,
  tarball: Uint8Array,
  manifest: Record<string, unknown>
): Promise<ReadonlyArray<Problem>> => {
  const copy = new Uint8Array(tarball)
  const { messages } = await publint({ pack: { tarball: copy.buffer }, level: "suggestion", strict: true })
  return messages.map((message) => ({
    pkg,
    file: "package.json",
    message: `publint ${message.code}: ${formatMessage(message, manifest, { color: false }) ?? message.code}`
  }))
}
