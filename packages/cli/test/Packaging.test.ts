/**
 * The packages as a user gets them: built, packed with `pnpm pack`, installed from the
 * tarballs into a project outside the workspace on another effect 4.x minor, then used
 * with plain `node` (no tsx): a library program through `TurnPipeline`, and the packed
 * `sluice` command. Needs the npm registry (or npm's cache) for effect and its kin.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { execFile } from "node:child_process"
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../../", import.meta.url))
const packagesDir = join(root, "packages")
const transcript = join(packagesDir, "providers", "test", "fixtures", "openai-chat", "tools-interleaved.sse")

/** The effect family the consumer installs: one minor below the workspace's. */
const consumerVersions = {
  effect: "4.0.6",
  "@effect/platform-node": "4.0.6",
  "@types/node": "^20.19.0"
}

const Dependencies = Schema.optional(Schema.Record(Schema.String, Schema.String))

/** The fields of a package.json this test reads. */
const Manifest = Schema.fromJsonString(
  Schema.Struct({ version: Schema.String, dependencies: Dependencies, peerDependencies: Dependencies })
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

/** The library program a user writes: a transcript through the pipeline, its summary printed. */
const consumerProgram = `import { Summary } from "@sluice/accumulator"
import { TurnContext, TurnPipeline, TurnSource } from "@sluice/pipeline"
import { RedisStreamsMemory } from "@sluice/redis"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { readFileSync } from "node:fs"

const file = process.argv[2]
if (file === undefined) throw new Error("usage: node consumer.js TRANSCRIPT")
const body = Stream.make(new Uint8Array(readFileSync(file)))

const program = Effect.gen(function*() {
  const context = yield* TurnContext.make()
  const result = yield* TurnPipeline.run(context, TurnSource.sse("openai-chat", body))
  return Summary.fromTurn(result.turn)
})

const summary = await Effect.runPromise(
  program.pipe(Effect.provide(TurnPipeline.layer().pipe(Layer.provide(RedisStreamsMemory.layer))))
)
process.stdout.write(JSON.stringify(summary) + "\\n")
`

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

describe("packaging", () => {
  it.effect(
    "the packed packages install and run outside the workspace on another effect minor",
    () =>
      Effect.gen(function*() {
        const workspaceEffect = yield* readManifest(
          yield* promise(() => readFile(join(root, "node_modules", "effect", "package.json"), "utf8"))
        )
        const workspaceMinor = workspaceEffect.version.split(".").slice(0, 2).join(".")
        expect(consumerVersions.effect.startsWith(`${workspaceMinor}.`)).toBe(false)

        // the build the tarballs carry (incremental: quick when dist/ is current)
        yield* run("pnpm", ["build"], root)

        const tarballs = yield* tempDir("sluice-tarballs-")
        const names = (yield* promise(() => readdir(packagesDir, { withFileTypes: true })))
          .filter((entry) => entry.isDirectory())
          .map((entry) => entry.name)
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

        for (const { entries, manifest, manifestText, name } of packed) {
          const unwanted = entries.filter((entry) =>
            /(^|\/)test\/|\.test\.|vitest\.config|tsbuildinfo|tsconfig/.test(entry)
          )
          expect(unwanted, `${name}'s tarball`).toEqual([])
          for (
            const wanted of ["package/LICENSE", "package/README.md", "package/dist/index.js", "package/dist/index.d.ts"]
          ) {
            expect(entries, `${name}'s tarball`).toContain(wanted)
          }
          expect(manifestText, `${name}'s published package.json`).not.toContain("workspace:")
          expect(manifestText, `${name}'s published package.json`).not.toContain("@sluice/source")
          expect(manifest.dependencies ?? {}, `${name}'s dependencies`).not.toHaveProperty("effect")
          expect(manifest.peerDependencies ?? {}, `${name}'s peer dependencies`).toHaveProperty("effect")
        }

        const consumer = yield* tempDir("sluice-consumer-")
        const dependencies = {
          // every package but effect-ai, whose AI modules need effect ^4.1: this app runs an
          // older minor on purpose
          ...Object.fromEntries(
            packed.filter(({ name }) => name !== "effect-ai").map((
              { name, tarball }
            ) => [`@sluice/${name}`, `file:${tarball}`])
          ),
          ...consumerVersions
        }
        yield* promise(() =>
          writeFile(
            join(consumer, "package.json"),
            JSON.stringify({ name: "sluice-consumer", private: true, type: "module", dependencies }, null, 2)
          )
        )
        yield* promise(() => writeFile(join(consumer, "tsconfig.json"), JSON.stringify(consumerTsconfig, null, 2)))
        yield* promise(() => writeFile(join(consumer, "consumer.ts"), consumerProgram))
        yield* run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], consumer)

        // one effect for everything: the packages' peer dependency is the app's own
        expect(yield* promise(() => effectCopies(join(consumer, "node_modules")))).toEqual([
          join(consumer, "node_modules", "effect")
        ])
        const installedEffect = yield* readManifest(
          yield* promise(() => readFile(join(consumer, "node_modules", "effect", "package.json"), "utf8"))
        )
        expect(installedEffect.version).toBe(consumerVersions.effect)

        // a plain strict tsconfig, the workspace's compiler, then plain node
        yield* run(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", consumer], consumer)
        const library = yield* run(process.execPath, [join(consumer, "out", "consumer.js"), transcript], consumer)
        const cli = yield* run(
          process.execPath,
          [
            join(consumer, "node_modules", "@sluice", "cli", "dist", "bin.js"),
            "normalize",
            "--provider",
            "openai-chat",
            transcript
          ],
          consumer
        )
        expect(library.stderr).not.toContain(versionMismatch)
        expect(cli.stderr).not.toContain(versionMismatch)
        const summary: unknown = JSON.parse(library.stdout)
        expect(summary).toEqual(JSON.parse(cli.stdout))
        expect(summary).toMatchObject({ status: "complete", toolCalls: [{}, {}] })
      }),
    900_000
  ) // measured 180-460 s on the busy 2-core machine: a build, eleven packs, an npm install
})
