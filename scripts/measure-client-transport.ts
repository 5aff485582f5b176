/**
 * Measures `@sluice/client` against a follower built on `@durable-streams/client`, the
 * official Durable Streams client, and prints the figures that
 * packages/client/README.md ("Transport") states.
 *
 * 1. Size: each entry bundled by esbuild as the README measures `@sluice/client`
 *    (`--bundle --minify --format=esm --platform=browser`), raw and gzipped (zlib,
 *    level 9): `@sluice/client` whole, its `followTurn` alone, `@durable-streams/client`'s
 *    `stream` alone, and the prototype below, a minimal follow-a-turn on it.
 * 2. Behaviour: the prototype's bundle and `@sluice/client` follow the same running
 *    turn on an in-process turn server (in-memory stores) through a TCP proxy that cuts
 *    every connection mid-turn: does each get every upsert exactly once, on its own?
 *
 * The prototype reads the turn's Stream B as a Durable Streams JSON stream
 * (`/v1/stream/turns/:turnId/upserts`) from `-1` with `live: "sse"`, folds each upsert
 * over its item, and keeps the offset to resume from: what a switch would ship.
 *
 * Run with `pnpm exec tsx scripts/measure-client-transport.ts`.
 */
import { followTurn, TurnState } from "@sluice/client"
import { DurableStoreMemory } from "@sluice/durable-streams"
import { RedisStreamsMemory } from "@sluice/redis"
import { proxy } from "@sluice/testing/browser"
import { producer, quietLogs, serveWith } from "@sluice/testing/server"
import { upsertMessages } from "@sluice/testing/turns"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { build } from "esbuild"
import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { gzipSync } from "node:zlib"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const clientSrc = join(root, "packages", "client", "src")
// the server's tests pin @durable-streams/client: its ES module, resolved from there
const dsClient = createRequire(join(root, "packages", "server", "package.json"))
  .resolve("@durable-streams/client")
  .replace(/\.cjs$/, ".js")

/** The prototype: a turn followed over Durable Streams, as an app on it would. */
const prototype = `
import { stream } from ${JSON.stringify(dsClient)}
import { isTurnEvent, isUpsert } from ${JSON.stringify(join(clientSrc, "Wire.ts"))}
import type { TurnStatus, Upsert } from ${JSON.stringify(join(clientSrc, "Wire.ts"))}

interface Entry { readonly eventId: string; readonly payloadType: string; readonly payload: unknown }

export interface State {
  readonly items: ReadonlyArray<Upsert>
  readonly status: TurnStatus
  readonly offset: string
  readonly entries: ReadonlyArray<string>
}

export const followTurn = (
  baseUrl: string,
  turnId: string,
  options: { readonly token?: string; readonly offset?: string; readonly onChange?: (state: State) => void }
) => {
  const controller = new AbortController()
  let state: State = { items: [], status: "streaming", offset: options.offset ?? "-1", entries: [] }
  const done = (async () => {
    const response = await stream<Entry>({
      url: baseUrl + "/v1/stream/turns/" + turnId + "/upserts",
      offset: state.offset,
      live: "sse",
      signal: controller.signal,
      headers: options.token === undefined ? {} : { authorization: "Bearer " + options.token }
    })
    await new Promise<void>((resolve, reject) => {
      response.subscribeJson((batch) => {
        let { items, status } = state
        for (const entry of batch.items) {
          if (entry.payloadType === "item_upsert" && isUpsert(entry.payload)) {
            const upsert = entry.payload
            const at = items.findIndex((item) => item.itemId === upsert.itemId)
            items = at < 0 ? [...items, upsert] : items.map((item, i) => (i === at ? upsert : item))
          } else if (entry.payloadType === "turn_event" && isTurnEvent(entry.payload)) {
            const event = entry.payload
            if (event.type === "turn_completed") status = event.status
            if (event.type === "turn_error") status = "error"
          }
        }
        state = { items, status, offset: batch.offset, entries: [...state.entries, ...batch.items.map((e) => e.eventId)] }
        options.onChange?.(state)
        if (batch.streamClosed) resolve()
      })
      // the batch that closes the stream ends the follow: \`closed\` can resolve before
      // the subscriber is handed it (a catch-up read that reaches the end)
      response.closed.catch(reject)
    })
    return state
  })()
  return { done, close: () => controller.abort(), state: () => state }
}
`

interface Size {
  readonly name: string
  readonly bytes: number
  readonly gzipped: number
}

const bundle = async (dir: string, name: string, source: string): Promise<{ size: Size; file: string }> => {
  const entry = join(dir, `${name}.ts`)
  writeFileSync(entry, source)
  const out = join(dir, `${name}.mjs`)
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    outfile: out,
    write: false,
    logLevel: "silent"
  })
  const code = result.outputFiles[0]!.contents
  writeFileSync(out, code)
  return { size: { name, bytes: code.length, gzipped: gzipSync(code, { level: 9 }).length }, file: out }
}

interface Followed {
  readonly entries: ReadonlyArray<string>
  readonly status: string
}

interface PrototypeModule {
  readonly followTurn: (
    baseUrl: string,
    turnId: string,
    options: { readonly offset?: string; readonly token?: string }
  ) => {
    readonly done: Promise<Followed & { readonly offset: string }>
    readonly close: () => void
    readonly state: () => Followed & { readonly offset: string }
  }
}

const isPrototypeModule = (value: unknown): value is PrototypeModule =>
  typeof value === "object" && value !== null && "followTurn" in value && typeof value.followTurn === "function"

const token = "measure-client-transport-token"

// Rejections that nobody handled, by what they said: a follower that leaves one behind
// would crash a Node process (and log an error in a browser), so they are counted and
// told, not let to end the measurement.
const unhandled: Array<string> = []
process.on("unhandledRejection", (reason) => {
  unhandled.push(reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason))
})
const unhandledSince = (from: number) => {
  const seen = unhandled.slice(from)
  return seen.length === 0 ? "none" : `${seen.length} (${Array.from(new Set(seen)).join("; ")})`
}

/** Polls `done` until it holds (a script: real time, at most `seconds`). */
const until = (done: () => boolean, seconds = 20) =>
  Effect.gen(function*() {
    for (let i = 0; i < seconds * 50 && !done(); i++) yield* Effect.sleep("20 millis")
    return done()
  })

const outcome = (promise: Promise<unknown>) =>
  Effect.promise(() => promise.then(() => "finished", (error: unknown) => `failed (${String(error)})`)).pipe(
    Effect.timeoutOrElse({ duration: "20 seconds", orElse: () => Effect.succeed("still waiting after 20 s") })
  )

// Each follower reads a running turn of 40 upserts through the proxy; every connection
// is cut once 10 have arrived, then the other 30 are published.
const behaviour = (prototype: PrototypeModule) =>
  Effect.gen(function*() {
    const base = yield* serveWith({ tokens: [token] })
    const cutting = yield* proxy(base)
    const line = (text: string) => Effect.sync(() => process.stdout.write(`${text}\n`))

    const dsTurn = randomUUID()
    const dsMessages = upsertMessages(dsTurn, 40)
    const dsProducer = yield* producer(dsTurn, dsMessages)
    yield* dsProducer.release(10)
    const dsUnhandled = unhandled.length
    const ds = prototype.followTurn(cutting.url, dsTurn, { token })
    yield* until(() => ds.state().entries.length >= 10)
    const dsCut = yield* cutting.cut
    yield* dsProducer.release(30)
    const dsEnd = yield* outcome(ds.done)
    const dsSeen = ds.state()
    const exactly = (entries: ReadonlyArray<string>) =>
      entries.length === dsMessages.length && entries.every((id, i) => id === dsMessages[i]!.eventId)
    yield* line(
      `@durable-streams/client: ${dsCut} connection(s) cut; ${dsEnd} on its own with ${dsSeen.entries.length} of 40 upserts, status ${dsSeen.status}, every upsert exactly once: ${
        exactly(dsSeen.entries)
      }; unhandled rejections: ${unhandledSince(dsUnhandled)}`
    )
    if (dsSeen.entries.length < 40) {
      // what the app must do itself: follow again from the offset it kept
      const again = prototype.followTurn(cutting.url, dsTurn, { offset: dsSeen.offset, token })
      const againEnd = yield* outcome(again.done)
      yield* line(
        `  followed again from offset ${dsSeen.offset}: ${againEnd} with ${again.state().entries.length} more; every upsert exactly once: ${
          exactly([...dsSeen.entries, ...again.state().entries])
        }`
      )
    }

    const sluiceTurn = randomUUID()
    const sluiceMessages = upsertMessages(sluiceTurn, 40)
    const sluiceProducer = yield* producer(sluiceTurn, sluiceMessages)
    yield* sluiceProducer.release(10)
    const sluiceUnhandled = unhandled.length
    const sluice = followTurn(cutting.url, sluiceTurn, { token, reconnect: { baseMs: 50, maxMs: 500 } })
    yield* until(() => TurnState.isAfter(sluice.getSnapshot().lastEventId ?? "0-0", "0-9"))
    const sluiceCut = yield* cutting.cut
    yield* sluiceProducer.release(30)
    const sluiceEnd = yield* outcome(sluice.done)
    const final = sluice.getSnapshot()
    const lastUpsert = sluiceMessages[sluiceMessages.length - 2]!.payload
    const asPublished = final.items.length === 1 && lastUpsert === JSON.stringify(final.items[0])
    yield* line(
      `@sluice/client: ${sluiceCut} connection(s) cut; ${sluiceEnd} on its own (${final.connection}), status ${final.status}, last entry ${final.lastEventId}, the item as last published: ${asPublished}; unhandled rejections: ${
        unhandledSince(sluiceUnhandled)
      }`
    )
  }).pipe(Effect.scoped, Effect.provide(Layer.merge(RedisStreamsMemory.layer, DurableStoreMemory.layer)), Effect.orDie)

const main = async () => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-client-transport-"))
  try {
    const sizes = await Promise.all([
      bundle(dir, "sluice-client", `export * from ${JSON.stringify(join(clientSrc, "index.ts"))}`),
      bundle(dir, "sluice-followTurn", `export { followTurn } from ${JSON.stringify(join(clientSrc, "index.ts"))}`),
      bundle(dir, "ds-stream", `export { stream } from ${JSON.stringify(dsClient)}`),
      bundle(dir, "ds-followTurn", prototype)
    ])
    process.stdout.write("bundle (esbuild --minify, esm, browser)   bytes   gzipped\n")
    for (const { size } of sizes) {
      process.stdout.write(
        `${size.name.padEnd(40)} ${String(size.bytes).padStart(7)} ${String(size.gzipped).padStart(9)}\n`
      )
    }
    const loaded: unknown = await import(pathToFileURL(sizes[3]!.file).href)
    if (!isPrototypeModule(loaded)) throw new Error("the prototype's bundle does not export followTurn")
    process.stdout.write("\nfollowing a running turn through a proxy that cuts every connection mid-turn\n")
    await Effect.runPromise(quietLogs(behaviour(loaded)))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
