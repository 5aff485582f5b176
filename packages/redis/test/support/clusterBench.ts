/**
 * What the cluster layer's paths cost Node, on a three-master cluster it starts:
 *
 * - the write path: `xaddAll` of Stream A-sized entries (pipelines of 32, `MAXLEN ~`,
 *   explicit ids) over many keys at once, through the batch connections routed by
 *   slot, through the cluster client's `pipeline()`, and through the single-node
 *   layer on one `redis-server`, in turn, in CPU µs of Node per `XADD` (making the
 *   entries included);
 * - a tail's connection: a plain connection to the slot's master (what a tail opens)
 *   against a `duplicate()` of the cluster client, in ms of wall time and of Node CPU
 *   per connection opened and closed.
 *
 * Run: `pnpm exec tsx packages/redis/test/support/clusterBench.ts` (or bundled with
 * esbuild first, as `pnpm bench` measures).
 */
import { startRedisCluster, startRedisServer } from "@sluice/testing/redis"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Cluster, Redis } from "ioredis"
import { performance } from "node:perf_hooks"
import { RedisStreams } from "../../src/RedisStreams.js"
import * as RedisStreamsCluster from "../../src/RedisStreamsCluster.js"
import * as RedisStreamsLive from "../../src/RedisStreamsLive.js"
import type { Fields } from "../../src/StreamEntry.js"

const keys = 200
const rounds = 16
const batch = 32

const fields = (turn: number, n: number): Fields => [
  ["eventId", `3b1f5c1e-0000-4000-8000-${String(n).padStart(12, "0")}`],
  ["timestamp", String(1_700_000_000_000 + n)],
  ["turnId", `5d3f1c2a-8a61-4c4e-9f3b-${String(turn).padStart(12, "0")}`],
  ["payloadType", "item_delta"],
  ["payload", JSON.stringify({ type: "item_delta", item_id: "item_0", delta_content: `word ${n} `.repeat(8), n })]
]

const writes = (run: string) =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams
    const started = process.cpuUsage()
    const wall = performance.now()
    for (let round = 0; round < rounds; round++) {
      yield* Effect.forEach(Array.from({ length: keys }, (_, k) => k), (k) =>
        redis.xaddAll(
          `bench-${run}:turn:{${k}}:events`,
          Array.from(
            { length: batch },
            (_, i) => ({ id: `0-${round * batch + i + 1}`, fields: fields(k, round * batch + i) })
          ),
          { maxLen: 100_000 }
        ).pipe(Effect.tap((results) =>
          results.some((r) => r._tag === "Failure")
            ? Effect.die(String(results.find((r) => r._tag === "Failure")?.failure))
            : Effect.void
        )), { concurrency: "unbounded", discard: true })
    }
    const cpu = process.cpuUsage(started)
    const entries = keys * rounds * batch
    return {
      cpuUsPerXadd: (cpu.user + cpu.system) / entries,
      entriesPerS: entries / ((performance.now() - wall) / 1000)
    }
  })

const connections = async (nodes: ReadonlyArray<{ host: string; port: number }>, n: number) => {
  const cluster = new Cluster(nodes.map((node) => ({ ...node })), { lazyConnect: true })
  await cluster.connect()
  const measure = async (open: () => Promise<{ disconnect: () => void }>) => {
    const started = process.cpuUsage()
    const wall = performance.now()
    for (let i = 0; i < n; i++) (await open()).disconnect()
    const cpu = process.cpuUsage(started)
    return { msEach: (performance.now() - wall) / n, cpuMsEach: (cpu.user + cpu.system) / 1000 / n }
  }
  const plain = await measure(async () => {
    const client = new Redis({ ...nodes[0]!, lazyConnect: true })
    await client.connect()
    return client
  })
  const duplicated = await measure(async () => {
    const copy = cluster.duplicate()
    await copy.connect()
    return copy
  })
  cluster.disconnect()
  return { plain, duplicated }
}

const main = async () => {
  const cluster = await startRedisCluster()
  const single = await startRedisServer()
  try {
    const nodes = cluster.nodes.map(({ port }) => ({ host: "127.0.0.1", port }))
    const layers = {
      "cluster, batch connections by slot": RedisStreamsCluster.layer({ nodes }),
      "cluster, ioredis pipeline()": RedisStreamsCluster.layer({ nodes, writePath: "pipeline" }),
      "one server, batch connection": RedisStreamsLive.layer({ url: single.url })
    }
    for (let trial = 0; trial < 4; trial++) {
      for (const [name, layer] of Object.entries(layers)) {
        const result = await Effect.runPromise(
          writes(`${trial}-${name.length}`).pipe(Effect.provide(Layer.fresh(layer)))
        )
        process.stdout.write(
          `${name}: ${result.cpuUsPerXadd.toFixed(1)} µs Node CPU per XADD, ${
            Math.round(result.entriesPerS)
          } entries/s\n`
        )
      }
    }
    const opened = await connections(nodes, 30)
    process.stdout.write(
      `tail connection: plain ${opened.plain.msEach.toFixed(1)} ms (${opened.plain.cpuMsEach.toFixed(2)} ms CPU), ` +
        `cluster duplicate() ${opened.duplicated.msEach.toFixed(1)} ms (${
          opened.duplicated.cpuMsEach.toFixed(2)
        } ms CPU)\n`
    )
  } finally {
    await cluster.close()
    await single.close()
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`)
  process.exitCode = 1
})
