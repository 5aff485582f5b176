// `pnpm bench`: bundles scripts/bench.ts and the workspace packages it uses with
// esbuild (as a build would ship them, without tsx's per-function name wrappers), then
// runs the bundle in this Node process. Dependencies from node_modules stay external.
// The sections of `entries` are modules of their own (exporting `run`), bundled apart:
// `pnpm bench handwritten` runs scripts/bench/handwritten.ts alone; with no section
// named, they run after scripts/bench.ts's.
import { build } from "esbuild"
import { mkdirSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { pathToFileURL } from "node:url"

const entries = {
  handwritten: "scripts/bench/handwritten.ts",
  languageModel: "scripts/bench/languageModel.ts",
  threads: "scripts/bench/threads.ts"
}

mkdirSync("bench-results", { recursive: true })
const bundle = (entry, outfile) =>
  build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    // the workspace packages from their sources, as the tests see them (no build needed)
    conditions: ["@sluice/source"],
    plugins: [
      {
        // bare imports stay external, except the workspace's own TypeScript packages
        name: "external-dependencies",
        setup(b) {
          // resolved from the importing package, so a dependency of one workspace package
          // (ioredis in packages/redis) is found although the root does not list it
          b.onResolve({ filter: /^[^./]/ }, (args) => {
            if (args.path.startsWith("@sluice/") || args.path.startsWith("node:")) return undefined
            try {
              return {
                path: pathToFileURL(createRequire(join(args.resolveDir, "noop.js")).resolve(args.path)).href,
                external: true
              }
            } catch {
              return { path: args.path, external: true }
            }
          })
        }
      }
    ],
    logLevel: "warning"
  })

const wanted = process.argv.slice(2)
const own = wanted.length === 0 ? Object.keys(entries) : wanted.filter((name) => name in entries)
const rest = wanted.filter((name) => !(name in entries))
if (wanted.length === 0 || rest.length > 0) {
  await bundle("scripts/bench.ts", "bench-results/bench.mjs")
  // scripts/bench.ts reads its sections from the arguments
  process.argv = [...process.argv.slice(0, 2), ...rest]
  await import(pathToFileURL("bench-results/bench.mjs").href)
} else {
  process.stdout.write(`# Sluice benchmarks (node ${process.version}, ${new Date().toISOString()})\n`)
}
for (const name of own) {
  const outfile = `bench-results/bench-${name}.mjs`
  await bundle(entries[name], outfile)
  const section = await import(pathToFileURL(outfile).href)
  process.stdout.write((await section.run()) + "\n")
}
