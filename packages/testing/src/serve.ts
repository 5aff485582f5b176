/**
 * `sluice serve` as a process of its own (`node --import tsx src/bin.ts serve ...`),
 * for tests that signal it or need it apart from the test's process: its base address
 * once it prints the viewer's link, its output, its exit, and signals by pid. Killed
 * (SIGKILL) when the scope closes, if it still runs.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { spawn } from "node:child_process"
import { realpathSync } from "node:fs"
import { join } from "node:path"

// the workspace's root (its package.json names every package as a devDependency, so
// each is linked in its node_modules), and the command's sources found by the package's
// name, run by tsx as the tests run them
const root = join(import.meta.dirname, "..", "..", "..")
const bin = join(realpathSync(join(root, "node_modules", "@sluice", "cli")), "src", "bin.ts")

/**
 * A running `sluice serve` process.
 *
 * @since 0.3.0
 */
export interface ServeProcess {
  /** `http://127.0.0.1:<port>` */
  readonly base: string
  readonly stdout: () => string
  readonly stderr: () => string
  /** Completes with the exit code, or the signal that ended the process. */
  readonly exited: Effect.Effect<number | NodeJS.Signals>
  readonly kill: (signal: NodeJS.Signals) => Effect.Effect<void>
}

/**
 * Runs `sluice serve --port 0 ...args` with `env` added to the test's environment.
 *
 * @since 0.3.0
 */
export const serveProcess = (
  env: Record<string, string>,
  ...args: ReadonlyArray<string>
): Effect.Effect<ServeProcess, Error, Scope.Scope> =>
  Effect.gen(function*() {
    const exit = yield* Deferred.make<number | NodeJS.Signals>()
    const listening = yield* Deferred.make<string, Error>()
    let stdout = ""
    let stderr = ""
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const child = spawn(process.execPath, ["--import", "tsx", bin, "serve", "--port", "0", ...args], {
          cwd: root,
          env: { ...process.env, REDIS_URL: undefined, SLUICE_REDIS_URL: undefined, ...env },
          stdio: ["ignore", "pipe", "pipe"]
        })
        child.stdout.on("data", (data: Buffer) => {
          stdout += data.toString()
          const base = /the turn viewer: http:\/\/[^:/]+:(\d+)/.exec(stdout)?.[1]
          if (base !== undefined) Deferred.doneUnsafe(listening, Effect.succeed(`http://127.0.0.1:${base}`))
        })
        child.stderr.on("data", (data: Buffer) => void (stderr += data.toString()))
        child.on("exit", (code, signal) => {
          Deferred.doneUnsafe(exit, Effect.succeed(signal ?? code ?? -1))
          Deferred.doneUnsafe(listening, Effect.fail(new Error(`sluice serve exited before it listened:\n${stderr}`)))
        })
        return child
      }),
      (child) => Effect.sync(() => child.exitCode === null && child.signalCode === null && child.kill("SIGKILL"))
    )
    const base = yield* Deferred.await(listening)
    return {
      base,
      stdout: () => stdout,
      stderr: () => stderr,
      exited: Deferred.await(exit),
      kill: (signal) => Effect.sync(() => void process.kill(child.pid ?? -1, signal))
    }
  })
