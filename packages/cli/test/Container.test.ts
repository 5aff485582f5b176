/**
 * The container recipe, checked without a container engine. The Dockerfile's runtime
 * stage is put in place from its own `COPY` lines (the build stage's bundle made by
 * `packages/cli/scripts/bundle.mjs`, as `pnpm build` makes it) in a directory with no
 * `node_modules` anywhere above it, and run as the image runs it: its `ENV`, its
 * `ENTRYPOINT` and `CMD` (`sluice serve`), with Node's own executable standing for the
 * base image's. It must answer `/healthz` and `/readyz`; the image's `HEALTHCHECK` and
 * compose.yaml's, run as written (less Docker's `CMD` wrapper), must pass against it and
 * fail against a closed port, and compose.yaml's readiness check must fail once Redis
 * is gone while the liveness check still passes.
 */
import { describe, expect, it } from "@effect/vitest"
import * as TurnServerOptions from "@sluice/server/TurnServerOptions"
import { freePort, scopedRedisServer } from "@sluice/testing/redis"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { execFile, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { access, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join, posix } from "node:path"
import { afterAll, beforeAll } from "vitest"
import * as Dockerfile from "./support/dockerfile.js"
import * as Yaml from "./support/yaml.js"

const root = join(import.meta.dirname, "..", "..", "..")
const cliDir = join(import.meta.dirname, "..")

const stages = Dockerfile.parse(await readFile(join(root, "Dockerfile"), "utf8"))
const runtime = stages.at(-1)!
const build = Dockerfile.stage(stages, "build")
const imageEnv = Dockerfile.env(runtime)
const healthcheck = Dockerfile.healthcheck(runtime)
const entrypoint = Dockerfile.execForm(Dockerfile.last(runtime, "ENTRYPOINT")!)
const command = Dockerfile.execForm(Dockerfile.last(runtime, "CMD")!)

// a process started as the image starts it sees only the image's environment and its own
// (not Vitest's NODE_OPTIONS, which points Node at the workspace's sources)
const hostEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== "NODE_OPTIONS"))

interface Exited {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs a command to its end (killed past `timeoutMs`): its exit code (`null` when killed) and output. */
const exec = (
  argv: ReadonlyArray<string>,
  options: { readonly env: Readonly<Record<string, string | undefined>>; readonly timeoutMs: number; cwd?: string }
) =>
  Effect.callback<Exited>((resume, signal) => {
    execFile(
      argv[0]!,
      argv.slice(1),
      { env: options.env, timeout: options.timeoutMs, signal, ...(options.cwd ? { cwd: options.cwd } : {}) },
      (error, stdout, stderr) =>
        resume(Effect.succeed({
          code: error === null ? 0 : typeof error.code === "number" ? error.code : null,
          stdout,
          stderr
        }))
    )
  })

interface Installed {
  /** The image's file system: `/app/dist/bin.js` is `<rootfs>/app/dist/bin.js`. */
  readonly rootfs: string
  /** The image paths the runtime stage's COPY lines wrote. */
  readonly placed: ReadonlyArray<string>
  readonly dir: string
}

let installed: Installed | undefined

const image = (): Installed => {
  if (installed === undefined) throw new Error("the runtime stage was not installed")
  return installed
}

/**
 * Where a path of the build stage is on this machine: the bundle's output from the
 * bundle made for this test (`bundleDir`), any other file from the repository (the
 * build stage copies the context to its WORKDIR). Other build output is refused: the
 * runtime stage is to need the bundle only.
 */
const buildSource = (bundleDir: string) => (from: string | undefined, path: string): string => {
  if (from !== "build") throw new Error(`COPY ${path}: the runtime stage copies from the build stage only`)
  const relative = posix.relative(Dockerfile.workdir(build), path)
  if (relative.startsWith("..") || posix.isAbsolute(relative)) {
    throw new Error(`COPY ${path}: outside the build stage's WORKDIR`)
  }
  const bundle = "packages/cli/dist"
  if (relative === `${bundle}/bin.js` || relative.startsWith(`${bundle}/chunks`)) {
    return join(bundleDir, relative.slice("packages/cli/".length))
  }
  if (/(^|\/)(dist|node_modules)(\/|$)/.test(relative)) {
    throw new Error(`COPY ${path}: build output other than the command's bundle`)
  }
  return join(root, relative)
}

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), "sluice-container-"))
  // the bundle script writes `dist/` where it runs and reads `src/bin.ts` from there: run
  // in a directory of its own, with the command's sources linked, it leaves the
  // workspace's dist/ as it is
  const bundleDir = join(dir, "bundle")
  await mkdir(bundleDir)
  await symlink(join(cliDir, "src"), join(bundleDir, "src"))
  const bundled = await Effect.runPromise(
    exec([process.execPath, join(cliDir, "scripts", "bundle.mjs")], {
      env: hostEnv,
      timeoutMs: 100_000,
      cwd: bundleDir
    })
  )
  if (bundled.code !== 0) throw new Error(`bundle.mjs failed (${bundled.code}): ${bundled.stderr}`)
  const rootfs = join(dir, "rootfs")
  const placed = await Dockerfile.install(runtime, rootfs, buildSource(bundleDir))
  installed = { rootfs, placed, dir }
}, 120_000)

afterAll(async () => {
  if (installed !== undefined) await rm(installed.dir, { recursive: true, force: true })
})

/** An argument of ENTRYPOINT or CMD as this machine runs it: the base image's node is Node's own, image files are under rootfs. */
const hostArgument = (argument: string, index: number): string => {
  if (index === 0) return process.execPath
  const { placed, rootfs } = image()
  return placed.some((path) => argument === path || argument.startsWith(`${path}/`)) ? join(rootfs, argument) : argument
}

const free = Effect.promise(() => freePort())

/**
 * The image run with `runEnv` (`docker run -e ...`), for the length of the scope: its
 * ENTRYPOINT and CMD, in its WORKDIR, with its ENV; ready once it prints the viewer's
 * link. `exited` waits for its exit code; the scope kills it if it still runs.
 */
const runImage = (runEnv: Readonly<Record<string, string>>) =>
  Effect.gen(function*() {
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        spawn(
          hostArgument(entrypoint[0]!, 0),
          [...entrypoint, ...command].slice(1).map((a, i) => hostArgument(a, i + 1)),
          {
            cwd: join(image().rootfs, Dockerfile.workdir(runtime)),
            env: { ...imageEnv, ...runEnv }
          }
        )
      ),
      (child) => Effect.sync(() => void child.kill("SIGKILL"))
    )
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (data: Buffer) => void (stdout += data.toString()))
    child.stderr.on("data", (data: Buffer) => void (stderr += data.toString()))
    const exited = Effect.callback<number | null>((resume) => {
      if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.succeed(child.exitCode))
      child.once("exit", (code) => resume(Effect.succeed(code)))
    })
    yield* Effect.callback<void, Error>((resume) => {
      const check = () => {
        if (stdout.includes("the turn viewer: ")) resume(Effect.void)
        else if (child.exitCode !== null || child.signalCode !== null) {
          resume(Effect.fail(new Error(`the image exited (${child.exitCode ?? child.signalCode}): ${stderr}`)))
        } else return
        child.stdout.off("data", check)
        child.off("exit", check)
      }
      child.stdout.on("data", check)
      child.on("exit", check)
      check()
      return Effect.sync(() => {
        child.stdout.off("data", check)
        child.off("exit", check)
      })
    })
    return { child, exited, stdout: () => stdout, stderr: () => stderr }
  })

const get = (url: string, headers: Record<string, string> = {}) =>
  Effect.promise(async () => {
    const response = await fetch(url, { headers, signal: AbortSignal.timeout(10_000) })
    return { status: response.status, body: await response.text() }
  })

/** A health check command as Docker runs it in the container: its node is Node's own, its environment the image's and the run's. */
const runCheck = (argv: ReadonlyArray<string>, port: number, timeoutMs: number) =>
  exec([process.execPath, ...argv.slice(1)], { env: { ...imageEnv, SLUICE_PORT: String(port) }, timeoutMs })

/** The bytes of every file under a directory. */
const sizeOf = async (path: string): Promise<number> => {
  const info = await stat(path)
  if (!info.isDirectory()) return info.size
  let total = 0
  for (const entry of await readdir(path)) total += await sizeOf(join(path, entry))
  return total
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false
  )

describe("the Dockerfile", () => {
  it("builds with pnpm in one stage and runs the bundle as a non-root user, copied alone, in the other", () => {
    expect(stages.map((stage) => stage.name)).toStrictEqual(["build", "runtime"])
    const runs = Dockerfile.all(build, "RUN").map((instruction) => instruction.args)
    expect(runs).toContainEqual(expect.stringContaining("npm install --global pnpm@10.34.9"))
    expect(runs).toContainEqual(expect.stringContaining("pnpm install --frozen-lockfile"))
    expect(Dockerfile.all(build, "COPY").map((instruction) => instruction.args)).toStrictEqual([". ."])
    // nothing runs in the runtime stage (its base has no shell): it only copies, from the build stage
    expect(Dockerfile.all(runtime, "RUN")).toStrictEqual([])
    expect(Dockerfile.copies(runtime).map((copy) => copy.from)).toStrictEqual(
      Dockerfile.copies(runtime).map(() => "build")
    )
    const user = Dockerfile.last(runtime, "USER")?.args
    expect(user).toBeDefined()
    expect(user).not.toMatch(/^(root|0)(:|$)/)
    expect(Dockerfile.last(runtime, "EXPOSE")?.args.split(/\s+/)).toContain(imageEnv["SLUICE_PORT"])
    expect(imageEnv["SLUICE_HOST"]).toBe("0.0.0.0")
    expect(command[0]).toBe("serve")
    expect(entrypoint).toStrictEqual([healthcheck?.command[0], "/app/dist/bin.js"])
  })

  it.live(
    "what its runtime stage copies runs alone: sluice serve on Redis answers /healthz and /readyz, and ends on SIGTERM",
    () =>
      Effect.gen(function*() {
        const { placed, rootfs } = image()
        expect(placed).toContain("/app/dist/bin.js")
        // no node_modules in the image's files, nor above them where Node would look
        const found: Array<string> = []
        for (let dir = join(rootfs, "app"); dir !== dirname(dir); dir = dirname(dir)) {
          if (yield* Effect.promise(() => exists(join(dir, "node_modules")))) found.push(dir)
        }
        expect(found).toStrictEqual([])
        const bytes = yield* Effect.promise(() => sizeOf(join(rootfs, "app")))
        // measured 5.3 MB: the bundle and its chunks, the manifest, the licence
        expect(bytes).toBeLessThan(12 * 1024 * 1024)

        const redis = yield* scopedRedisServer()
        const port = yield* free
        const token = randomUUID()
        const server = yield* runImage({ SLUICE_PORT: String(port), SLUICE_API_TOKENS: token, REDIS_URL: redis.url })
        expect(server.stdout()).toContain(`the turn viewer: http://localhost:${port}/#access_token=`)
        const base = `http://127.0.0.1:${port}`
        expect(yield* get(`${base}/healthz`)).toStrictEqual({ status: 200, body: JSON.stringify({ status: "ok" }) })
        expect(yield* get(`${base}/readyz`)).toStrictEqual({ status: 200, body: JSON.stringify({ status: "ready" }) })
        // the API itself wants the token given in the environment
        expect((yield* get(`${base}/v1/turns`)).status).toBe(401)
        expect((yield* get(`${base}/v1/turns`, { authorization: `Bearer ${token}` })).status).toBe(200)
        // the log format of the image's ENV: one JSON object a line
        const logged = server.stderr().trimEnd().split("\n")
        expect(logged.length).toBeGreaterThan(0)
        for (const line of logged) expect(JSON.parse(line)).toHaveProperty("message")
        // `docker stop` sends SIGTERM
        server.child.kill("SIGTERM")
        expect(yield* server.exited).toBe(143)
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "its HEALTHCHECK, run as written, passes against that server and fails against a closed port",
    () =>
      Effect.gen(function*() {
        expect(healthcheck).toBeDefined()
        const check = healthcheck!.command
        // the base image's node, as the ENTRYPOINT names it; /healthz: liveness
        expect(check[0]).toBe(entrypoint[0])
        expect(check.join(" ")).toContain("/healthz")
        const timeoutMs = Dockerfile.durationMs(healthcheck!.options["timeout"]!)
        const port = yield* free
        yield* runImage({ SLUICE_PORT: String(port), SLUICE_API_TOKENS: randomUUID() })
        expect((yield* runCheck(check, port, timeoutMs)).code).toBe(0)
        const closed = yield* free
        const failed = yield* runCheck(check, closed, timeoutMs)
        expect(failed.code).not.toBe(0)
        expect(failed.code).not.toBeNull() // it failed by itself, before Docker's timeout
      }).pipe(Effect.scoped),
    120_000
  )
})

const Healthcheck = Schema.Struct({
  test: Schema.Array(Schema.String),
  interval: Schema.String,
  timeout: Schema.String,
  retries: Schema.Number,
  start_period: Schema.String
})

/** The parts of compose.yaml these tests read. */
const Compose = Schema.Struct({
  services: Schema.Struct({
    redis: Schema.Struct({
      image: Schema.String,
      command: Schema.Array(Schema.String),
      volumes: Schema.Array(Schema.String),
      healthcheck: Healthcheck
    }),
    sluice: Schema.Struct({
      build: Schema.String,
      depends_on: Schema.Struct({ redis: Schema.Struct({ condition: Schema.String }) }),
      environment: Schema.Record(Schema.String, Schema.NullOr(Schema.String)),
      ports: Schema.Array(Schema.String),
      healthcheck: Healthcheck,
      stop_grace_period: Schema.String
    })
  }),
  volumes: Schema.Record(Schema.String, Schema.Null)
})

const compose = Schema.decodeUnknownSync(Compose)(Yaml.parse(await readFile(join(root, "compose.yaml"), "utf8")))
const { redis: redisService, sluice: sluiceService } = compose.services

describe("compose.yaml", () => {
  it("runs the image after a healthy Redis with an append-only file, with no secret in the file", () => {
    expect(redisService.image).toMatch(/^redis:/)
    expect(redisService.command.join(" ")).toContain("--appendonly yes")
    const volume = redisService.volumes.find((mount) => mount.endsWith(":/data"))?.split(":")[0]
    expect(volume).toBeDefined()
    expect(Object.keys(compose.volumes)).toContain(volume)
    expect(redisService.healthcheck.test.join(" ")).toContain("redis-cli ping")

    expect(sluiceService.build).toBe(".")
    expect(sluiceService.depends_on.redis.condition).toBe("service_healthy")
    expect(sluiceService.environment["REDIS_URL"]).toBe("redis://redis:6379")
    // credentials only from the environment: passed on by name, or interpolated from it
    const credentials = Object.entries(sluiceService.environment).filter(([name]) =>
      /TOKEN|KEY|PASSWORD|SECRET/.test(name)
    )
    expect(credentials.map(([name]) => name)).toContain("SLUICE_API_TOKENS")
    for (const [name, value] of credentials) {
      expect([name, value]).toStrictEqual([
        name,
        value === null ? null : expect.stringMatching(/^\$\{\w+(:?[-?][^}]*)?\}$/)
      ])
    }
    // a stop waits longer than the shutdown budget it sets (docs/container.md), so the
    // process ends its turns and exits before SIGKILL
    const budget = /^\$\{SLUICE_SHUTDOWN_TIMEOUT_MS:-(\d+)\}$/.exec(
      sluiceService.environment["SLUICE_SHUTDOWN_TIMEOUT_MS"] ?? ""
    )?.[1]
    expect(Number(budget)).toBe(TurnServerOptions.shutdownTimeoutDefault)
    expect(Dockerfile.durationMs(sluiceService.stop_grace_period)).toBeGreaterThan(Number(budget) + 1_000)
    // the published port is the image's
    expect(sluiceService.ports.map((mapping) => mapping.split(":").at(-1))).toContain(imageEnv["SLUICE_PORT"])
    for (const check of [redisService.healthcheck, sluiceService.healthcheck]) {
      for (const duration of [check.interval, check.timeout, check.start_period]) {
        expect(Dockerfile.durationMs(duration)).toBeGreaterThan(0)
      }
    }
  })

  it.live(
    "its readiness check (/readyz) passes while Redis answers and fails once Redis is gone, while the image's liveness check still passes",
    () =>
      Effect.gen(function*() {
        const check = sluiceService.healthcheck.test
        expect(check[0]).toBe("CMD")
        const argv = check.slice(1)
        expect(argv[0]).toBe(entrypoint[0])
        expect(argv.join(" ")).toContain("/readyz")
        const timeoutMs = Dockerfile.durationMs(sluiceService.healthcheck.timeout)
        const liveness = healthcheck!.command
        const livenessTimeoutMs = Dockerfile.durationMs(healthcheck!.options["timeout"]!)

        const redis = yield* scopedRedisServer()
        const port = yield* free
        yield* runImage({ SLUICE_PORT: String(port), SLUICE_API_TOKENS: randomUUID(), REDIS_URL: redis.url })
        expect((yield* runCheck(argv, port, timeoutMs)).code).toBe(0)
        expect((yield* runCheck(argv, yield* free, timeoutMs)).code).not.toBe(0)

        yield* Effect.promise(() => redis.kill())
        expect((yield* get(`http://127.0.0.1:${port}/readyz`)).status).toBe(503)
        const unready = yield* runCheck(argv, port, timeoutMs)
        expect(unready.code).not.toBe(0)
        expect(unready.code).not.toBeNull()
        expect((yield* runCheck(liveness, port, livenessTimeoutMs)).code).toBe(0)
      }).pipe(Effect.scoped),
    120_000
  )
})
