/**
 * The command behind `pnpm release:check`: checks every public package of this repository
 * (or of the workspace whose root is its one argument) as it would be published (check.ts
 * says what), prints each problem with its package and file, and exits 1 when there is
 * one. It packs what is built: `pnpm build` first (`pnpm install` runs it).
 */
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { formatReport, releaseCheck } from "./check.js"

const argument = process.argv[2]
const root = argument === undefined ? join(dirname(fileURLToPath(import.meta.url)), "..", "..") : resolve(argument)
const report = await releaseCheck({ root })
const text = formatReport(report)
if (report.problems.length > 0) {
  console.error(text)
  process.exitCode = 1
} else {
  console.log(text)
}
