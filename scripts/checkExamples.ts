/**
 * Type-checks every code example the project shows: each `@example` in the JSDoc of
 * `packages/*\/src`, and each ```ts block of the READMEs and of `docs/`.
 *
 * Every example becomes a module of its own under `packages/cli/.examples/` (ignored by git) and
 * the TypeScript compiler checks them together against the packages' sources, so an
 * example that uses a name it does not import, or an API that changed, fails here.
 * A block that goes on from the block before it (in the same file) says so on its first
 * line with the comment `// continued`, and is checked together with it; a block that
 * is deliberately a fragment says so with `// fragment`, and is skipped.
 *
 * Run with `pnpm examples`; `pnpm lint` runs it too.
 */
import { execFileSync } from "node:child_process"
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
// inside the package that depends on every other one, so each example resolves what a
// user of the packages would have installed
const outDir = join(root, "packages", "cli", ".examples")

interface Example {
  readonly file: string
  readonly line: number
  readonly code: string
}

const walk = (dir: string, keep: (path: string) => boolean): ReadonlyArray<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (name === "node_modules" || name === "dist") return []
    return statSync(path).isDirectory() ? walk(path, keep) : keep(path) ? [path] : []
  })

/** The fenced ```ts blocks of a text, with the line each one's code starts on. */
const fencedBlocks = (text: string, file: string, stripComment: boolean): ReadonlyArray<Example> => {
  const lines = text.split("\n").map((line) => (stripComment ? line.replace(/^\s*\* ?/, "") : line))
  const examples: Array<Example> = []
  let start: number | undefined
  let body: Array<string> = []
  lines.forEach((line, index) => {
    if (start === undefined) {
      if (/^\s*```(ts|typescript)\s*$/.test(line)) {
        start = index + 1
        body = []
      }
    } else if (/^\s*```\s*$/.test(line)) {
      examples.push({ file, line: start + 1, code: body.join("\n") })
      start = undefined
    } else {
      body.push(line)
    }
  })
  return examples
}

/** The `@example` blocks of a source file's JSDoc comments. */
const jsdocExamples = (text: string, file: string): ReadonlyArray<Example> => {
  const examples: Array<Example> = []
  for (const match of text.matchAll(/\/\*\*[\s\S]*?\*\//g)) {
    const comment = match[0]
    const at = comment.indexOf("@example")
    if (at < 0) continue
    const offset = text.slice(0, (match.index ?? 0) + at).split("\n").length - 1
    for (const example of fencedBlocks(comment.slice(at), file, true)) {
      examples.push({ ...example, line: example.line + offset })
    }
  }
  return examples
}

const sources = walk(join(root, "packages"), (path) => /\/src\/.*\.ts$/.test(path) && !path.endsWith(".d.ts"))
const markdown = [
  join(root, "README.md"),
  ...walk(
    join(root, "packages"),
    (path) =>
      path.endsWith("README.md") || path.endsWith(".md") && path.includes("/packages/") && !path.includes("/test/")
  ),
  // docs/api/ is generated from the JSDoc (`pnpm docs:api`): its examples are the JSDoc's, checked above
  ...walk(join(root, "docs"), (path) => path.endsWith(".md") && !path.includes(`${join(root, "docs", "api")}/`))
]

const examples = [
  ...sources.flatMap((path) => jsdocExamples(readFileSync(path, "utf8"), path)),
  ...markdown.flatMap((path) => fencedBlocks(readFileSync(path, "utf8"), path, false))
].filter((example) => !example.code.trimStart().startsWith("// fragment"))
  .reduce<Array<Example>>((joined, example) => {
    const previous = joined.at(-1)
    if (
      example.code.trimStart().startsWith("// continued") && previous !== undefined && previous.file === example.file
    ) {
      // one module, so the lines of the first block keep their numbers
      joined[joined.length - 1] = { ...previous, code: `${previous.code}\n${example.code}` }
    } else {
      joined.push(example)
    }
    return joined
  }, [])

rmSync(outDir, { recursive: true, force: true })
mkdirSync(outDir, { recursive: true })
const origins = new Map<string, Example>()
examples.forEach((example, index) => {
  const name = `example${String(index).padStart(3, "0")}.ts`
  origins.set(name, example)
  // every example is a module of its own, so two examples may use the same names
  writeFileSync(join(outDir, name), `${example.code}\nexport {}\n`)
})

const packages = readdirSync(join(root, "packages"))
writeFileSync(
  join(outDir, "tsconfig.json"),
  JSON.stringify(
    {
      extends: "../../../tsconfig.base.json",
      compilerOptions: {
        noUnusedLocals: false,
        noUnusedParameters: false,
        lib: ["ES2022", "DOM"],
        paths: {
          ...Object.fromEntries(packages.map((name) => [`@sluice/${name}`, [`../../${name}/src/index.ts`]])),
          ...Object.fromEntries(packages.map((name) => [`@sluice/${name}/*`, [`../../${name}/src/*.ts`]])),
          // dependencies of one package that the command line's package does not have
          "@effect/ai": ["../../effect-ai/node_modules/@effect/ai/dist/dts/index.d.ts"]
        }
      },
      include: ["*.ts", "../../*/src/**/*.d.ts"]
    },
    null,
    2
  )
)

const tsc = join(root, "node_modules", "typescript", "bin", "tsc")
try {
  execFileSync(process.execPath, [tsc, "-p", join(outDir, "tsconfig.json"), "--noEmit", "--pretty", "false"], {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"]
  })
  process.stderr.write(`examples: ${examples.length} checked\n`)
} catch (error) {
  const output = error instanceof Error && "stdout" in error ? String(error.stdout) : String(error)
  // point each error at the example's own file and line
  const mapped = output.replace(
    /^packages\/cli\/\.examples\/(example\d+\.ts)\((\d+),(\d+)\)/gm,
    (whole, name: string, line: string, column: string) => {
      const origin = origins.get(name)
      return origin === undefined
        ? whole
        : `${relative(root, origin.file)}(${origin.line + Number(line) - 1},${column})`
    }
  )
  process.stderr.write(mapped)
  process.stderr.write(`examples: type errors in the examples above\n`)
  process.exitCode = 1
}
