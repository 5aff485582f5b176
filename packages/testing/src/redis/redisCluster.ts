/**
 * A throwaway Redis Cluster for tests: three masters, no replicas, on free loopback
 * ports, each `redis-server` in a temporary directory of its own with its
 * `nodes-<port>.conf`, joined with `redis-cli --cluster create`. A killed master
 * restarts on the same port and configuration, so it rejoins holding its slots.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { type ChildProcess, execFile } from "node:child_process"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { freePort, launchRedis, persistentArgs, serverArgs, stop } from "./RedisServer.js"

const run = promisify(execFile)
const cli = process.env.REDIS_CLI_BIN ?? "redis-cli"

/**
 * One master of the cluster: its port and process.
 *
 * @since 0.3.0
 */
export interface ClusterNode {
  readonly port: number
  /** Stops the node with SIGKILL, as a crash would, and waits for it to exit. */
  readonly kill: () => Promise<void>
  /** Starts the node again on the same port, directory and cluster configuration. */
  readonly restart: () => Promise<void>
}

/**
 * A running Redis Cluster: its nodes, and how to kill, restart and stop them.
 *
 * @since 0.3.0
 */
export interface RedisCluster {
  readonly nodes: ReadonlyArray<ClusterNode>
  /** `127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3`, as `REDIS_CLUSTER_NODES` takes it. */
  readonly nodeList: string
  /** The node serving `key`'s slot (as `CLUSTER KEYSLOT` and `CLUSTER SLOTS` say). */
  readonly nodeOf: (key: string) => Promise<ClusterNode>
  /** Moves `key`'s slot, with its keys, to `to`, as a resharding does. */
  readonly moveSlotOf: (key: string, to: ClusterNode) => Promise<void>
  /** Waits until every node reports `cluster_state:ok`. */
  readonly healthy: () => Promise<void>
  readonly close: () => Promise<void>
}

const launch = (port: number, dir: string): Promise<ChildProcess> =>
  launchRedis([
    ...serverArgs(port, dir),
    ...persistentArgs,
    "--cluster-enabled",
    "yes",
    "--cluster-config-file",
    `nodes-${port}.conf`,
    "--cluster-node-timeout",
    "2000"
  ])

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const info = async (port: number): Promise<string> => {
  try {
    return (await run(cli, ["-p", String(port), "CLUSTER", "INFO"])).stdout
  } catch {
    return ""
  }
}

/**
 * Starts a three-master Redis Cluster on free loopback ports.
 *
 * @since 0.3.0
 */
export const startRedisCluster = async (): Promise<RedisCluster> => {
  const dir = await mkdtemp(join(tmpdir(), "sluice-cluster-"))
  const children = new Map<number, ChildProcess>()
  const nodes: Array<ClusterNode> = []
  try {
    for (let i = 0; i < 3; i++) {
      const port = await freePort()
      const nodeDir = join(dir, String(port))
      await run("mkdir", ["-p", nodeDir])
      children.set(port, await launch(port, nodeDir))
      nodes.push({
        port,
        kill: () => stop(children.get(port)!, "SIGKILL"),
        restart: async () => {
          children.set(port, await launch(port, nodeDir))
        }
      })
    }
    const nodeList = nodes.map((node) => `127.0.0.1:${node.port}`)
    await run(cli, ["--cluster", "create", ...nodeList, "--cluster-replicas", "0", "--cluster-yes"])
    const healthy = async () => {
      for (;;) {
        const states = await Promise.all(nodes.map((node) => info(node.port)))
        if (states.every((state) => state.includes("cluster_state:ok"))) return
        await pause(100)
      }
    }
    await healthy()
    const on = async (node: ClusterNode, ...args: Array<string>) =>
      (await run(cli, ["-p", String(node.port), ...args])).stdout.trim()
    const nodeOf = async (key: string) => {
      const slot = Number(await on(nodes[0]!, "CLUSTER", "KEYSLOT", key))
      const ranges = JSON.parse(await on(nodes[0]!, "--json", "CLUSTER", "SLOTS")) as ReadonlyArray<
        [number, number, [string, number, ...Array<unknown>]]
      >
      const owner = ranges.find(([from, to]) => slot >= from && slot <= to)
      const node = nodes.find((n) => n.port === owner?.[2][1])
      if (node === undefined) throw new Error(`no node serves slot ${slot}`)
      return node
    }
    return {
      nodes,
      nodeList: nodeList.join(","),
      healthy,
      nodeOf,
      moveSlotOf: async (key, to) => {
        const from = await nodeOf(key)
        const slot = await on(from, "CLUSTER", "KEYSLOT", key)
        const [fromId, toId] = [await on(from, "CLUSTER", "MYID"), await on(to, "CLUSTER", "MYID")]
        await on(to, "CLUSTER", "SETSLOT", slot, "IMPORTING", fromId)
        await on(from, "CLUSTER", "SETSLOT", slot, "MIGRATING", toId)
        const keys = (await on(from, "CLUSTER", "GETKEYSINSLOT", slot, "1000")).split("\n").filter((k) => k !== "")
        if (keys.length > 0) await on(from, "MIGRATE", "127.0.0.1", String(to.port), "", "0", "10000", "KEYS", ...keys)
        for (const node of nodes) await on(node, "CLUSTER", "SETSLOT", slot, "NODE", toId)
      },
      close: async () => {
        await Promise.all([...children.values()].map((child) => stop(child, "SIGTERM")))
        await rm(dir, { recursive: true, force: true })
      }
    }
  } catch (error) {
    await Promise.all([...children.values()].map((child) => stop(child, "SIGKILL")))
    await rm(dir, { recursive: true, force: true })
    throw error
  }
}

/**
 * A cluster for the length of a scope.
 *
 * @since 0.3.0
 */
export const scopedRedisCluster: Effect.Effect<RedisCluster, never, Scope.Scope> = Effect.acquireRelease(
  Effect.promise(startRedisCluster),
  (cluster) => Effect.promise(() => cluster.close())
)
