/**
 * A throwaway `redis-server` for tests: loopback only, a free port, a temporary
 * directory, no persistence unless asked (the fault tests ask for an append-only file
 * so that a killed server comes back with what it acknowledged).
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtemp, rm } from "node:fs/promises"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

/**
 * A running `redis-server`: its port and URL, and how to stop, kill or restart it.
 *
 * @since 0.3.0
 */
export interface RedisServer {
  readonly port: number
  readonly url: string
  /** Stops the server with SIGKILL, as a crash would, and waits for it to exit. */
  readonly kill: () => Promise<void>
  /** Starts the server again on the same port and directory. */
  readonly restart: () => Promise<void>
  /** Stops the server for good and removes its directory. */
  readonly close: () => Promise<void>
  /** The running server's process id. */
  readonly pid: () => number | undefined
}

/**
 * A free TCP port on loopback.
 *
 * @since 0.3.0
 */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

/**
 * The arguments every test `redis-server` starts with: `port` on loopback only, its files
 * in `dir`, no snapshots, protected mode on.
 *
 * @since 0.3.0
 */
export const serverArgs = (port: number, dir: string): ReadonlyArray<string> => [
  "--port",
  String(port),
  "--bind",
  "127.0.0.1",
  "--dir",
  dir,
  "--save",
  "",
  "--protected-mode",
  "yes"
]

/**
 * The arguments that make a `redis-server` append every write to its file before it
 * answers, so a restart loses nothing.
 *
 * @since 0.3.0
 */
export const persistentArgs: ReadonlyArray<string> = ["--appendonly", "yes", "--appendfsync", "always"]

const launch = (port: number, dir: string, persistent: boolean): Promise<ChildProcess> =>
  launchRedis([...serverArgs(port, dir), ...(persistent ? persistentArgs : ["--appendonly", "no"])])

/**
 * Starts `redis-server` with `args` and waits until it prints `ready` (by default, that it accepts connections).
 *
 * @since 0.3.0
 */
export const launchRedis = (
  args: ReadonlyArray<string>,
  ready = "Ready to accept connections"
): Promise<ChildProcess> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.env.REDIS_SERVER_BIN ?? "redis-server", args, { stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    const onData = (data: Buffer) => {
      output += data.toString()
      if (output.includes(ready)) {
        child.stdout?.off("data", onData)
        child.stdout?.resume()
        child.off("exit", onExit)
        resolve(child)
      }
    }
    const onExit = (code: number | null) =>
      reject(new Error(`redis-server exited (${code}) before it was ready:\n${output}`))
    child.stdout?.on("data", onData)
    child.stderr?.on("data", (data: Buffer) => (output += data.toString()))
    child.once("error", reject)
    child.once("exit", onExit)
  })

/**
 * Stops a server with `signal` and waits for it to exit.
 *
 * @since 0.3.0
 */
export const stop = (child: ChildProcess, signal: NodeJS.Signals): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill(signal)
  })

/**
 * Starts a throwaway `redis-server` (with an append-only file when `persistent`).
 *
 * @since 0.3.0
 */
export const startRedisServer = async (options: { readonly persistent?: boolean } = {}): Promise<RedisServer> => {
  const dir = await mkdtemp(join(tmpdir(), "sluice-redis-"))
  const persistent = options.persistent === true
  let lastError: unknown
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort()
    try {
      let child = await launch(port, dir, persistent)
      return {
        port,
        url: `redis://127.0.0.1:${port}`,
        kill: () => stop(child, "SIGKILL"),
        restart: async () => {
          child = await launch(port, dir, persistent)
        },
        close: async () => {
          await stop(child, "SIGTERM")
          await rm(dir, { recursive: true, force: true })
        },
        pid: () => child.pid
      }
    } catch (error) {
      lastError = error
    }
  }
  await rm(dir, { recursive: true, force: true })
  throw lastError
}

/**
 * A server for the length of a scope.
 *
 * @since 0.3.0
 */
export const scopedRedisServer = (
  options: { readonly persistent?: boolean } = {}
): Effect.Effect<RedisServer, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() => startRedisServer(options)),
    (server) => Effect.promise(() => server.close())
  )
