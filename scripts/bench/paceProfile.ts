/**
 * Summarises a `node --cpu-prof` profile of `pnpm bench pace` (the measured process):
 * self time by package and the top functions by self time. The workspace packages are
 * inside the esbuild bundle (`bench-results/bench.mjs`); a sample there is put down to
 * the module whose `// packages/...` marker comment precedes its line, so give it the
 * bundle of the profiled run (every `pnpm bench` rebuilds it: copy it beside the profile).
 *
 * `npx tsx scripts/bench/paceProfile.ts <file.cpuprofile> [bench-results/bench.mjs]`
 *
 * @internal
 */
import * as Schema from "effect/Schema"
import { readFileSync } from "node:fs"

const ProfileNode = Schema.Struct({
  id: Schema.Number,
  callFrame: Schema.Struct({
    functionName: Schema.String,
    url: Schema.String,
    lineNumber: Schema.Number,
    columnNumber: Schema.Number
  })
})
type ProfileNode = typeof ProfileNode.Type

const Profile = Schema.Struct({
  nodes: Schema.Array(ProfileNode),
  samples: Schema.Array(Schema.Number),
  timeDeltas: Schema.Array(Schema.Number)
})

const [profilePath, bundlePath = "bench-results/bench.mjs"] = process.argv.slice(2)
if (profilePath === undefined) throw new Error("usage: paceProfile.ts <file.cpuprofile> [bundle]")
const profile = Schema.decodeUnknownSync(Schema.fromJsonString(Profile))(readFileSync(profilePath, "utf8"))

// the bundle's module markers: line (0-based) -> module path
const markers: Array<{ readonly line: number; readonly module: string }> = []
readFileSync(bundlePath, "utf8").split("\n").forEach((text, line) => {
  const match = /^\/\/ ((?:packages|scripts)\/\S+)$/.exec(text)
  if (match !== null) markers.push({ line, module: match[1]! })
})
const moduleAt = (line: number): string => {
  let low = 0
  let high = markers.length - 1
  let found = "bundle"
  while (low <= high) {
    const mid = (low + high) >> 1
    if (markers[mid]!.line <= line) {
      found = markers[mid]!.module
      low = mid + 1
    } else high = mid - 1
  }
  return found
}

const packageOf = (node: ProfileNode): { readonly pkg: string; readonly file: string } => {
  const { url, functionName, lineNumber } = node.callFrame
  if (url === "") return { pkg: functionName.startsWith("(") ? functionName : "(native)", file: "" }
  if (url.endsWith(bundlePath.split("/").pop()!)) {
    const module = moduleAt(lineNumber)
    const pkg = module.startsWith("packages/") ? `@sluice/${module.split("/")[1]}` : "bench script"
    return { pkg, file: module }
  }
  const pnpm = /node_modules\/\.pnpm\/[^/]+\/node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(url)
  if (pnpm !== null) return { pkg: pnpm[1]!, file: pnpm[2]! }
  if (url.startsWith("node:")) return { pkg: "node (internals)", file: url }
  return { pkg: url, file: url }
}

// self time per node, from the samples and their time deltas
const self = new Map<number, number>()
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)))
const total = [...self.values()].reduce((a, b) => a + b, 0)

const byPackage = new Map<string, number>()
const byFunction = new Map<string, number>()
const byInternal = new Map<string, number>()
for (const node of profile.nodes) {
  const time = self.get(node.id) ?? 0
  if (time === 0) continue
  const { file, pkg } = packageOf(node)
  byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + time)
  const name = `${node.callFrame.functionName || "(anonymous)"} ${pkg}${file === "" ? "" : ` ${file}`}`
  byFunction.set(name, (byFunction.get(name) ?? 0) + time)
  if (pkg === "node (internals)" || pkg === "(native)") {
    const where = pkg === "(native)" ? `(native) ${node.callFrame.functionName}` : file
    byInternal.set(where, (byInternal.get(where) ?? 0) + time)
  }
}

const table = (title: string, entries: Map<string, number>, count: number) => {
  process.stdout.write(`\n| ${title} | self ms | share |\n|---|---:|---:|\n`)
  for (const [name, time] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, count)) {
    process.stdout.write(`| ${name} | ${(time / 1000).toFixed(0)} | ${(time / total * 100).toFixed(1)}% |\n`)
  }
}
process.stdout.write(`profile ${profilePath}: ${(total / 1e6).toFixed(1)} s sampled\n`)
table("package", byPackage, 20)
table("Node's own code, by file (native: by function)", byInternal, 15)
table("function", byFunction, 30)
