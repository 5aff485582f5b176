// `pnpm bench`: bundles scripts/bench.ts and the workspace packages it uses with
// esbuild (as a build would ship them, without tsx's per-function name wrappers), then
// runs the bundle in this Node process. Dependencies from node_modules stay external.
import { build } from "esbuild"
import { mkdirSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { pathToFileURL } from "node:url"

mkdirSync("bench-results", { recursive: true })
const outfile = "bench-results/bench.mjs"
await build({
  entryPoints: ["scripts/bench.ts"],
  outfile,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
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
await import(pathToFileURL(outfile).href)
