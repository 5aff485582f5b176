/**
 * Bundles the `sluice` executable: `src/bin.ts` and everything it imports into
 * `dist/bin.js`, with each command's implementation (and what only it loads: the
 * server, the Redis client, the pipeline, OpenTelemetry) in a chunk of its own under
 * `dist/chunks/`, loaded when the command runs. One file to parse instead of hundreds
 * of small ES modules is what makes `sluice --version` start fast. The library modules
 * (`dist/*.js`, from `tsc`) are left as they are.
 *
 * `node scripts/bundle.mjs [outdir]` (from `packages/cli`) writes elsewhere than `dist`:
 * the readers bench bundles the sources of the checkout it measures this way.
 */
import { build } from "esbuild"
import { rmSync } from "node:fs"

const outdir = process.argv[2] ?? "dist"

// chunks are named by their hash: those of an earlier build would stay behind
rmSync(`${outdir}/chunks`, { recursive: true, force: true })

await build({
  entryPoints: { bin: "src/bin.ts" },
  outdir,
  chunkNames: "chunks/[name]-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node22",
  // the workspace's own packages from their sources, like the tests
  conditions: ["@sluice/source"],
  // CommonJS dependencies (ioredis) require Node's built-in modules
  banner: {
    js:
      "import { createRequire as __sluiceRequire } from \"node:module\"; const require = __sluiceRequire(import.meta.url);"
  },
  legalComments: "none",
  logLevel: "warning"
})
