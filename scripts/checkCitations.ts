/**
 * Holds the rule that the repository cites only what it holds: outside `docs/`, no file
 * names one of the five documents Sluice was first specified in (by "seed" and its
 * number, or the possessive) or an issue by its number. The `docs/` pages restate what
 * was taken from those documents; code, tests, changelogs and the READMEs cite them.
 *
 * It reads every file git tracks (or would track: untracked files not ignored) outside
 * `docs/`, prints each line that cites, and exits 1 when there is one. Run with
 * `tsx scripts/checkCitations.ts` (`pnpm lint` runs it).
 */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

/** A citation of something the repository does not hold. */
export const citation = new RegExp(["se" + "ed [0-9]", "se" + "ed's", "iss" + "ue [0-9]"].join("|"), "i")

/** One line that cites. */
export interface Citation {
  readonly file: string
  readonly line: number
  readonly text: string
}

/** The lines of `text` that cite, 1-based. */
export const citationsIn = (file: string, text: string): ReadonlyArray<Citation> =>
  text.split("\n").flatMap((line, index) => citation.test(line) ? [{ file, line: index + 1, text: line.trim() }] : [])

/** Every citation in the files of the repository at `root` outside `docs/`. */
export const citations = (root: string): ReadonlyArray<Citation> => {
  const files = execFileSync("git", ["-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "-z"], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024
  }).split("\0").filter((file) => file !== "" && !file.startsWith("docs/"))
  return files.flatMap((file) => {
    let text: string
    try {
      text = readFileSync(join(root, file), "utf8")
    } catch {
      return [] // listed but gone from the working tree
    }
    return text.includes("\0") ? [] : citationsIn(file, text)
  })
}

const main = () => {
  const root = join(dirname(fileURLToPath(import.meta.url)), "..")
  const found = citations(root)
  for (const { file, line, text } of found) {
    process.stderr.write(`${file}:${line}: cites a document the repository does not hold: ${text}\n`)
  }
  if (found.length > 0) {
    process.stderr.write(
      `checkCitations: ${found.length} line(s) cite a seed document or an issue; cite docs/ instead\n`
    )
    process.exitCode = 1
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) main()
