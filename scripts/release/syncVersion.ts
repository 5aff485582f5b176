/**
 * Writes the `sluice` command's version constant (`packages/cli/src/internal/version.ts`)
 * from the cli package's `package.json`, so that `changeset version` and `sluice
 * --version` never disagree: `pnpm release:version` runs `changeset version`, then this.
 * The constant exists because the command is one bundle that reads no `package.json` at
 * run time; `packages/cli/test/Output.test.ts` holds the two equal.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"

const root = join(import.meta.dirname, "..", "..")
const manifest: unknown = JSON.parse(readFileSync(join(root, "packages", "cli", "package.json"), "utf8"))
if (
  typeof manifest !== "object" || manifest === null || !("version" in manifest) ||
  typeof manifest.version !== "string"
) {
  throw new Error("packages/cli/package.json has no version")
}
const file = join(root, "packages", "cli", "src", "internal", "version.ts")
const text = readFileSync(file, "utf8")
const pattern = /export const version = "[^"]*"/
if (!pattern.test(text)) throw new Error(`${file} has no version constant`)
const next = text.replace(pattern, `export const version = ${JSON.stringify(manifest.version)}`)
if (next !== text) writeFileSync(file, next)
process.stderr.write(`packages/cli/src/internal/version.ts: ${manifest.version}\n`)
