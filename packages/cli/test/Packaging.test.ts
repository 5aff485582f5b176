/**
 * The packages as a user gets them: built, packed with `pnpm pack`, and installed from
 * the tarballs with `npm install` into projects outside the workspace, with no version
 * pins, as a new Effect app does on today's registry defaults (so `effect` is whatever
 * 4.x npm serves). The library tarballs go into one project with `effect`: npm must
 * resolve them without ERESOLVE or a peer warning, to exactly one `effect`, and the
 * README's library example must type-check with a plain strict `tsconfig.json` and run
 * under plain `node`. The `sluice` tarball goes alone into another project: it must
 * install nothing else (its executable is one self-contained bundle) and print the same
 * summary. Needs the npm registry (or npm's cache).
 */
import { describe, expect, it } from "@effect/vitest"
import { transcriptPath } from "@sluice/testing/fixtures"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { execFile } from "node:child_process"
import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../../", import.meta.url))
const packagesDir = join(root, "packages")
const transcript = transcriptPath("openai-chat", "tools-interleaved.sse")

const Dependencies = Schema.optional(Schema.Record(Schema.String, Schema.String))

/** The fields of a package.json this test reads. */
const Manifest = Schema.fromJsonString(
  Schema.Struct({
    version: Schema.String,
    private: Schema.optional(Schema.Boolean),
    dependencies: Dependencies,
    peerDependencies: Dependencies,
    peerDependenciesMeta: Schema.optional(
      Schema.Record(Schema.String, Schema.Struct({ optional: Schema.optional(Schema.Boolean) }))
    )
  })
)

const readManifest = (text: string) => Schema.decodeUnknownEffect(Manifest)(text)

interface Ran {
  readonly stdout: string
  readonly stderr: string
}

// the children run as a user's would: without the workspace's source condition
// (`scripts/vitestProject.ts` puts it in NODE_OPTIONS for the tests' own processes)
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== "NODE_OPTIONS"))

/** Runs a command to its end; fails with its output when it exits non-zero. */
const run = (command: string, args: ReadonlyArray<string>, cwd: string): Effect.Effect<Ran, Error> =>
  Effect.callback<Ran, Error>((resume, signal) => {
    execFile(command, args, { cwd, env, signal, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
      resume(
        error === null
          ? Effect.succeed({ stdout, stderr })
          : Effect.fail(new Error(`${command} ${args.join(" ")} failed: ${error.message}\n${stdout}\n${stderr}`))
      ))
  })

const promise = <A>(f: () => Promise<A>) => Effect.tryPromise({ try: f, catch: (cause) => new Error(String(cause)) })

/** A directory under the system's temporary directory, removed when the scope closes. */
const tempDir = (prefix: string) =>
  Effect.acquireRelease(
    promise(() => mkdtemp(join(tmpdir(), prefix))),
    (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )

/** Every `node_modules/effect` below a directory. */
const effectCopies = async (dir: string): Promise<ReadonlyArray<string>> => {
  const found: Array<string> = []
  const walk = async (current: string): Promise<void> => {
    for (const entry of await readdir(current, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue
      const path = join(current, entry.name)
      if (entry.name === "effect" && current.endsWith("node_modules")) found.push(path)
      await walk(path)
    }
  }
  await walk(dir)
  return found
}

/** The lines of npm's output that speak of peer dependencies or a failed resolution. */
const peerTrouble = ({ stderr, stdout }: Ran): ReadonlyArray<string> =>
  `${stdout}\n${stderr}`.split("\n").filter((line) => /ERESOLVE|peer/i.test(line))

/**
 * The first ```ts block after a heading of the README: the example a user copies.
 */
const readmeExample = (readme: string, heading: string): string | undefined => {
  const section = readme.indexOf(`\n${heading}\n`)
  if (section < 0) return undefined
  const start = readme.indexOf("```ts\n", section)
  const end = readme.indexOf("\n```", start + 6)
  return start < 0 || end < 0 ? undefined : readme.slice(start + 6, end + 1)
}

const consumerTsconfig = {
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    strict: true,
    skipLibCheck: true,
    types: ["node"],
    outDir: "out"
  },
  include: ["consumer.ts"]
}

const versionMismatch = "Executing an Effect versioned"

const npmInstall = ["install", "--prefer-offline", "--no-audit", "--no-fund"]

/** A project of its own: a package.json with no dependency yet. */
const project = (prefix: string) =>
  Effect.tap(
    tempDir(prefix),
    (dir) =>
      promise(() =>
        writeFile(
          join(dir, "package.json"),
          JSON.stringify({ name: prefix.slice(0, -1), private: true, type: "module" })
        )
      )
  )

describe("packaging", () => {
  it.effect(
    "the packed packages install with npm on today's effect 4 and run outside the workspace",
    () =>
      Effect.gen(function*() {
        // the build the tarballs carry (incremental: quick when dist/ is current)
        yield* run("pnpm", ["build"], root)

        const tarballs = yield* tempDir("sluice-tarballs-")
        // the published ones: not a private package (@sluice/testing, the tests' scaffolding)
        const dirs = (yield* promise(() => readdir(packagesDir, { withFileTypes: true })))
          .filter((entry) => entry.isDirectory())
          .map((entry) => entry.name)
        const names = yield* Effect.filter(dirs, (name) =>
          promise(() =>
            readFile(join(packagesDir, name, "package.json"), "utf8")
          ).pipe(
            Effect.flatMap(readManifest),
            Effect.map((manifest) => manifest.private !== true)
          ))
        expect(names.length).toBeGreaterThanOrEqual(11)
        const packed = yield* Effect.forEach(names, (name) =>
          Effect.gen(function*() {
            const { stdout } = yield* run("pnpm", ["pack", "--pack-destination", tarballs], join(packagesDir, name))
            const tarball = stdout.trim().split("\n").filter((line) => line.endsWith(".tgz")).pop()
            if (tarball === undefined) {
              return yield* Effect.fail(new Error(`pnpm pack printed no tarball for ${name}:\n${stdout}`))
            }
            const entries = (yield* run("tar", ["-tzf", tarball], tarballs)).stdout.trim().split("\n")
            const manifestText = (yield* run("tar", ["-xzOf", tarball, "package/package.json"], tarballs)).stdout
            return { name, tarball, entries, manifestText, manifest: yield* readManifest(manifestText) }
          }))

        // one version line for every package
        expect(new Set(packed.map(({ manifest }) => manifest.version)).size).toBe(1)
        // what a tarball may hold (no test, fixture, config or build info) is
        // `pnpm release:check`'s rule (scripts/release/rules.ts), not this test's
        for (const { entries, manifest, manifestText, name } of packed) {
          for (
            const wanted of ["package/LICENSE", "package/README.md", "package/dist/index.js", "package/dist/index.d.ts"]
          ) {
            expect(entries, `${name}'s tarball`).toContain(wanted)
          }
          expect(manifestText, `${name}'s published package.json`).not.toContain("workspace:")
          expect(manifestText, `${name}'s published package.json`).not.toContain("@sluice/source")
          expect(manifest.dependencies ?? {}, `${name}'s dependencies`).not.toHaveProperty("effect")
          expect(manifest.peerDependencies?.["effect"], `${name}'s peer dependency on effect`).toBe("^4.1.5")
        }

        // the command: nothing to install beside it, every peer optional (for library use)
        const cliPackage = packed.find(({ name }) => name === "cli")
        if (cliPackage === undefined) return yield* Effect.fail(new Error("no cli package"))
        expect(cliPackage.manifest.dependencies ?? {}).toEqual({})
        for (const peer of Object.keys(cliPackage.manifest.peerDependencies ?? {})) {
          expect(cliPackage.manifest.peerDependenciesMeta?.[peer]?.optional, `@sluice/cli's peer ${peer}`).toBe(true)
        }

        // the libraries, with effect at no pinned version, as `npm install` picks it today
        const consumer = yield* project("sluice-consumer-")
        const libraries = packed.filter(({ name }) => name !== "cli").map(({ tarball }) => tarball)
        const installed = yield* run("npm", [...npmInstall, ...libraries, "effect", "@types/node@20"], consumer)
        expect(peerTrouble(installed), "npm's output on peer dependencies").toEqual([])

        // one effect for everything: the packages' peer dependency is the app's own
        expect(yield* promise(() => effectCopies(join(consumer, "node_modules")))).toEqual([
          join(consumer, "node_modules", "effect")
        ])
        const installedEffect = yield* readManifest(
          yield* promise(() => readFile(join(consumer, "node_modules", "effect", "package.json"), "utf8"))
        )
        expect(installedEffect.version.split(".")[0]).toBe("4")

        // the README's example as it is written, a plain strict tsconfig, the workspace's
        // compiler, then plain node on the recorded body it reads
        const readme = yield* promise(() => readFile(join(root, "README.md"), "utf8"))
        const example = readmeExample(readme, "## Install (as a library)")
        if (example === undefined) return yield* Effect.fail(new Error("the README has no library example"))
        expect(example).toContain("\"response.sse\"")
        yield* promise(() => writeFile(join(consumer, "tsconfig.json"), JSON.stringify(consumerTsconfig, null, 2)))
        yield* promise(() => writeFile(join(consumer, "consumer.ts"), example))
        yield* promise(() => copyFile(transcript, join(consumer, "response.sse")))
        yield* run(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", consumer], consumer)
        const library = yield* run(process.execPath, [join(consumer, "out", "consumer.js")], consumer)

        // the command alone, in a project of its own
        const commandUser = yield* project("sluice-command-")
        const installedCli = yield* run("npm", [...npmInstall, cliPackage.tarball], commandUser)
        expect(peerTrouble(installedCli), "npm's output on peer dependencies").toEqual([])
        expect(
          (yield* promise(() => readdir(join(commandUser, "node_modules")))).filter((entry) => !entry.startsWith("."))
        ).toEqual(["@sluice"])
        expect(yield* promise(() => readdir(join(commandUser, "node_modules", "@sluice")))).toEqual(["cli"])
        const cli = yield* run(
          process.execPath,
          [
            join(commandUser, "node_modules", "@sluice", "cli", "dist", "bin.js"),
            "normalize",
            "--provider",
            "openai-chat",
            transcript
          ],
          commandUser
        )
        expect(library.stderr).not.toContain(versionMismatch)
        expect(cli.stderr).not.toContain(versionMismatch)
        const summary: unknown = JSON.parse(library.stdout)
        expect(summary).toEqual(JSON.parse(cli.stdout))
        expect(summary).toMatchObject({ status: "complete", toolCalls: [{}, {}] })
      }),
    900_000
  ) // measured 180-460 s on the busy 2-core machine: a build, eleven packs, two npm installs
})
