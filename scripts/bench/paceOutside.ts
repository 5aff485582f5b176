/**
 * The live-pace bench's outside load (the default): the provider stand-in
 * (`paceProvider.ts`) in its own Node process on a loopback port, and each turn's
 * source made as `sluice run` makes it (`packages/cli/src/internal/run.ts`): a
 * `ProviderClient` for `openai-chat` at the stand-in's base URL on `sluice run`'s client,
 * Node's `http` module (`BENCH_PACE_CLIENT=fetch`: on Node's `fetch`; `BENCH_PACE_CLIENT=undici`:
 * on `NodeHttpClient.layerUndici`), its `stream` of the turn's request as
 * `TurnSource.events`. So the HTTP client, the SSE framing and the normalizer are in
 * the measured process, and the pacing timer is not.
 *
 * @internal
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { TurnSource } from "@sluice/pipeline"
import { LlmRequest, ProviderClient, ProviderHttp } from "@sluice/providers"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import { spawn } from "node:child_process"
import { mkdirSync } from "node:fs"
import { createInterface } from "node:readline"
import type { Load, Sent } from "./paceLoad.js"
import { PERIOD_MS } from "./paceShared.js"

const BUNDLE = "bench-results/pace-provider.mjs"

/** Bundles the stand-in (it shares `paceShared.ts`) into one file Node runs as it is. */
const bundle = async () => {
  const { build } = await import("esbuild")
  mkdirSync("bench-results", { recursive: true })
  await build({
    entryPoints: ["scripts/bench/paceProvider.ts"],
    outfile: BUNDLE,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    logLevel: "warning"
  })
}

/** The outside load of `chunks` content chunks a turn: starts the stand-in. */
export const make = async (chunks: number): Promise<Load> => {
  await bundle()
  const child = spawn(process.execPath, [
    ...(process.env.BENCH_PACE_PROVIDER_NODE_OPTIONS ?? "").split(" ").filter((option) => option !== ""),
    BUNDLE,
    String(chunks)
  ], {
    stdio: ["ignore", "pipe", "inherit"]
  })
  const port = await new Promise<number>((resolve, reject) => {
    child.once("error", reject)
    child.once("exit", (code) => reject(new Error(`the provider stand-in exited (${code}) before it listened`)))
    const lines = createInterface({ input: child.stdout! })
    lines.once("line", (line) => {
      const parsed: unknown = JSON.parse(line)
      if (typeof parsed === "object" && parsed !== null && "port" in parsed && typeof parsed.port === "number") {
        resolve(parsed.port)
      } else reject(new Error(`the provider stand-in said ${line}`))
    })
  })
  const origin = `http://127.0.0.1:${port}`
  // as `sluice run` makes its client (its default timeouts are 5 minutes, as here), on
  // Node's `http` module; `BENCH_PACE_CLIENT=fetch` puts it on Node's fetch instead, and
  // `BENCH_PACE_CLIENT=undici` on undici's own client (`NodeHttpClient.layerUndici`)
  const clients = {
    node: { layer: ProviderHttp.layer, name: "Node's http module, as sluice run" },
    fetch: { layer: FetchHttpClient.layer, name: "FetchHttpClient (Node's fetch)" },
    undici: { layer: NodeHttpClient.layerUndici, name: "NodeHttpClient.layerUndici" }
  }
  const wanted = process.env.BENCH_PACE_CLIENT ?? "node"
  if (!(wanted === "node" || wanted === "fetch" || wanted === "undici")) {
    throw new Error(`BENCH_PACE_CLIENT is node, fetch or undici, not ${wanted}`)
  }
  const chosen = clients[wanted]
  // the client's connections live as long as the bench
  const http = await Effect.runPromise(Layer.buildWithScope(chosen.layer, Scope.makeUnsafe()))
  const client = await Effect.runPromise(
    Effect.provide(
      ProviderClient.make({
        provider: "openai-chat",
        apiKeys: [Redacted.make("pace-key")],
        baseUrl: `${origin}/v1`,
        responseTimeout: Duration.minutes(5),
        idleTimeout: Duration.minutes(5)
      }),
      http
    )
  )
  return {
    name:
      `outside (provider stand-in in its own process, pid ${child.pid}, OpenAI Chat SSE over loopback HTTP; ProviderClient on ${chosen.name})`,
    source: (index) =>
      TurnSource.events((turn) =>
        client.stream(LlmRequest.prompt("gpt-4o", `pace turn ${index}`), {
          runId: turn.runId,
          turnId: turn.turnId,
          threadId: turn.threadId,
          traceContext: turn.traceContext
        })
      ),
    sent: async (count): Promise<Sent> => {
      const response = await fetch(`${origin}/log?turns=${count}`)
      const log = new Float64Array(await response.arrayBuffer())
      const times = new Float64Array(count * chunks)
      const due = new Float64Array(count * chunks)
      for (let index = 0; index < count; index++) {
        const start = log[index * (chunks + 1)]!
        for (let k = 0; k < chunks; k++) {
          times[index * chunks + k] = log[index * (chunks + 1) + 1 + k]!
          due[index * chunks + k] = start + (k + 1) * PERIOD_MS
        }
      }
      return {
        times,
        due,
        requests: Number(response.headers.get("x-pace-requests")),
        aborted: Number(response.headers.get("x-pace-aborted"))
      }
    },
    pid: child.pid,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve()
        child.once("exit", () => resolve())
        child.kill("SIGTERM")
      })
  }
}
