/**
 * Producer processes for the end-to-end tests, spawned with the repository's `tsx`
 * and signalled by pid. The script runs in one process, `node --import tsx`: the
 * `tsx` command runs the script in a child of its own, which a SIGKILL to the pid it
 * returns would not reach.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { spawn } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, "..", "..", "..", "..")

export interface Spawned {
  readonly pid: number
  /** Everything the process wrote to stdout and stderr so far. */
  readonly output: () => string
  /** Completes with the exit code, or the signal that ended the process. */
  readonly exited: Effect.Effect<number | NodeJS.Signals>
  readonly kill: (signal: NodeJS.Signals) => Effect.Effect<void>
}

/**
 * Runs a support script (`test/support/<script>`) with arguments until the scope
 * closes (then SIGKILL, if it still runs); succeeds once it wrote `ready` on stdout.
 */
export const spawnScript = (
  script: string,
  args: ReadonlyArray<string>,
  ready: string
): Effect.Effect<Spawned, Error, Scope.Scope> =>
  Effect.gen(function*() {
    const exit = yield* Deferred.make<number | NodeJS.Signals>()
    const started = yield* Deferred.make<void, Error>()
    let output = ""
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const child = spawn(process.execPath, ["--import", "tsx", join(here, script), ...args], {
          cwd: root,
          stdio: ["ignore", "pipe", "pipe"]
        })
        const collect = (chunk: Buffer) => {
          output += chunk.toString("utf8")
          if (output.includes(ready)) Deferred.doneUnsafe(started, Effect.void)
        }
        child.stdout.on("data", collect)
        child.stderr.on("data", collect)
        child.on("exit", (code, signal) => {
          Deferred.doneUnsafe(exit, Effect.succeed(signal ?? code ?? -1))
          Deferred.doneUnsafe(started, Effect.fail(new Error(`${script} exited before it was ready:\n${output}`)))
        })
        return child
      }),
      (child) => Effect.sync(() => child.exitCode === null && child.signalCode === null && child.kill("SIGKILL"))
    )
    yield* Deferred.await(started)
    return {
      pid: child.pid ?? -1,
      output: () => output,
      exited: Deferred.await(exit),
      kill: (signal) => Effect.sync(() => process.kill(child.pid ?? -1, signal))
    }
  })
