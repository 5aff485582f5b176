/**
 * `@sluice/client` in headless Chromium, bundled for the page by esbuild, against a
 * real server (in-memory store) behind a proxy that can cut every connection: it
 * follows a running turn from its snapshot and feed, comes back from a cut connection
 * with `Last-Event-ID` applying every entry exactly once, starts over on a reloaded
 * page, and shows a turn whose producer died as ended with `producer_lost`. Its final
 * state is the turn's snapshot every time. Every page goes through the proxy: closing
 * it closes the browser's kept-alive connections, so the server closes at once.
 *
 * Fails, saying what to install, when `/usr/bin/chromium` is missing (as the viewer
 * tests do).
 */
import { describe, expect, it, layer } from "@effect/vitest"
import type { TurnState } from "@sluice/client"
import { RedisStreams, RedisStreamsMemory } from "@sluice/redis"
import type * as TurnServerOptions from "@sluice/server/TurnServerOptions"
import { TurnSnapshot } from "@sluice/server/TurnSnapshot"
import { browserLayer, bundleApp, newPage, proxy, run, unavailable } from "@sluice/testing/browser"
import { bearer, prefix, producer, publishEvents, replayedSample, request, serve, tokens } from "@sluice/testing/server"
import { streamEvents } from "@sluice/testing/turns"
import { TurnKeys } from "@sluice/turns"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"
import { fileURLToPath } from "node:url"
import type { Page } from "playwright-core"

// The client's snapshot type and the server's agree: a server snapshot is a client one.
type ServerSnapshot = Omit<TurnSnapshot, "entries">
const _agree = (snapshot: ServerSnapshot): import("@sluice/client").Snapshot => snapshot
void _agree

const decodeSnapshot = Schema.decodeUnknownEffect(TurnSnapshot)
const snapshotOf = (base: string, turnId: string) =>
  Effect.flatMap(request(`${base}/v1/turns/${turnId}`, bearer(tokens[0])), (reply) => decodeSnapshot(reply.body))

const testDir = fileURLToPath(new URL(".", import.meta.url))

// The client as the page loads it: one IIFE, `window.SluiceClient`.
const bundle = bundleApp({
  source: `export * from "@sluice/client"`,
  resolveDir: testDir,
  sourcefile: "client.js",
  globalName: "SluiceClient"
})

// The page's own script: follows a turn and records the entry ids it applied, in order.
const pageScript = `
window.follow = (turnId, token) => {
  const handle = SluiceClient.followTurn(location.origin, turnId, { token, reconnect: { baseMs: 50, maxMs: 400 } })
  const applied = []
  const connections = []
  handle.subscribe(() => {
    const state = handle.getSnapshot()
    if (state.lastEventId !== applied[applied.length - 1]) applied.push(state.lastEventId)
    if (state.connection !== connections[connections.length - 1]) connections.push(state.connection)
  })
  window.turn = { handle, applied, connections }
}
window.settled = () => window.turn.handle.done.then((state) => ({ state, applied: window.turn.applied, connections: window.turn.connections }))
`

interface Followed {
  readonly state: TurnState.TurnState
  readonly applied: ReadonlyArray<string>
  readonly connections: ReadonlyArray<string>
}

// A page on `origin` that holds the bundled client (routed by playwright: the page has
// the server's origin, so its requests are same-origin).
const clientPage = (origin: string) =>
  Effect.gen(function*() {
    const script = yield* bundle
    const { page, errors } = yield* newPage
    yield* run(() =>
      page.route(`${origin}/client-test`, (route) =>
        route.fulfill({
          contentType: "text/html",
          body: `<!doctype html><title>client</title><script>${script}</script><script>${pageScript}</script>`
        }))
    )
    yield* run(() => page.goto(`${origin}/client-test`))
    return { page, errors }
  })

const follow = (page: Page, turnId: string) =>
  run(() => page.evaluate(`window.follow(${JSON.stringify(turnId)}, ${JSON.stringify(tokens[0])})`))
const settled = (page: Page) => run(() => page.evaluate<Followed>("window.settled()"))
const connection = (page: Page, state: string) =>
  run(() =>
    page.waitForFunction(`window.turn?.handle.getSnapshot().connection === ${JSON.stringify(state)}`, undefined, {
      timeout: 30_000,
      polling: 50
    })
  )
const appliedThrough = (page: Page, entryId: string) =>
  run(() =>
    page.waitForFunction(`window.turn?.handle.getSnapshot().lastEventId === ${JSON.stringify(entryId)}`, undefined, {
      timeout: 30_000,
      polling: 50
    })
  )

// Entry ids `0-<from>` through `0-<to>`.
const entries = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `0-${from + i}`)

const expectState = (state: TurnState.TurnState, snapshot: TurnSnapshot) => {
  expect(state.items).toStrictEqual(snapshot.items)
  expect([state.status, state.usage, state.error, state.lastEventId]).toStrictEqual([
    snapshot.status,
    snapshot.usage,
    snapshot.error,
    snapshot.lastEventId
  ])
  expect(state.connection).toBe("finished")
}

// A server, a proxy before it, the replayed sample running as turn `turnId` with its
// first `released` messages published, and a page with the client on the proxy.
const runningTurn = (turnId: string, released: number, options: TurnServerOptions.Options = {}) =>
  Effect.gen(function*() {
    const base = yield* serve(options)
    const relay = yield* proxy(base)
    const messages = yield* replayedSample(turnId)
    const produce = yield* producer(turnId, messages)
    yield* produce.release(released)
    const { page, errors } = yield* clientPage(relay.url)
    return { base, relay, messages, produce, page, errors }
  })

const suite = layer(browserLayer, { timeout: 120_000, excludeTestServices: true })

if (unavailable !== undefined) {
  describe("@sluice/client in headless Chromium", () => {
    it("needs Debian's chromium", () => {
      throw new Error(`cannot run the client's browser tests: ${unavailable}`)
    })
  })
} else {
  suite("@sluice/client in headless Chromium", (it) => {
    it.effect(
      "follows a running turn; a cut connection resumes by Last-Event-ID: every entry applied once, the final state is the snapshot",
      () =>
        Effect.gen(function*() {
          const turnId = randomUUID()
          const { base, relay, messages, produce, page, errors } = yield* runningTurn(turnId, 3)
          yield* follow(page, turnId)
          yield* connection(page, "live")
          const before = 9
          yield* produce.release(before - 3)
          yield* appliedThrough(page, `0-${before}`)
          expect(yield* relay.cut).toBeGreaterThan(0)
          // the rest of the turn is published while the page is away
          yield* produce.release(messages.length - before)
          const followed = yield* settled(page)
          const snapshot = yield* snapshotOf(base, turnId)
          expectState(followed.state, snapshot)
          // the snapshot at 0-3, then each entry after it once, in order
          expect(followed.applied).toStrictEqual(entries(3, messages.length))
          expect(followed.connections).toContain("reconnecting")
          const feeds = relay.requests().filter((head) => head.startsWith(`GET /v1/turns/${turnId}/upserts`))
          expect(feeds.length).toBe(2)
          expect(feeds[0]).toMatch(/\r\nlast-event-id: 0-3\r\n/i)
          expect(feeds[1]).toMatch(new RegExp(`\\r\\nlast-event-id: 0-${before}\\r\\n`, "i"))
          expect(errors).toStrictEqual([])
        }).pipe(Effect.provide(RedisStreamsMemory.layer)),
      120_000
    )

    it.effect(
      "a page reloaded mid-turn starts over from the snapshot and ends with the turn",
      () =>
        Effect.gen(function*() {
          const turnId = randomUUID()
          const { base, messages, produce, page, errors } = yield* runningTurn(turnId, 4)
          yield* follow(page, turnId)
          yield* connection(page, "live")
          yield* produce.release(4)
          yield* appliedThrough(page, "0-8")
          yield* run(() => page.reload())
          yield* follow(page, turnId)
          yield* connection(page, "live")
          yield* produce.release(messages.length - 8)
          const followed = yield* settled(page)
          expectState(followed.state, yield* snapshotOf(base, turnId))
          expect(followed.applied).toStrictEqual(entries(8, messages.length))
          expect(errors).toStrictEqual([])
        }).pipe(Effect.provide(RedisStreamsMemory.layer)),
      120_000
    )

    it.effect(
      "a turn whose producer died ends with producer_lost, and the client shows it",
      () =>
        Effect.gen(function*() {
          const redis = yield* RedisStreams.RedisStreams
          const turnId = randomUUID()
          // a lease as a producer takes it, renewed by nobody from now on
          yield* redis.setPx(TurnKeys.leasedKey(prefix, turnId), "1", 60_000)
          yield* redis.setPx(TurnKeys.leaseKey(prefix, turnId), "1", 1_000)
          // Stream A's opening (the ending is written to both streams) and Stream B's
          yield* publishEvents(turnId, streamEvents(turnId, 20).slice(0, 5))
          const { base, page, errors } = yield* runningTurn(turnId, 5, { leaseCheckMs: 100 })
          yield* follow(page, turnId)
          const followed = yield* settled(page)
          expect(followed.state.status).toBe("error")
          expect(followed.state.error?.code).toBe("producer_lost")
          expectState(followed.state, yield* snapshotOf(base, turnId))
          expect(errors).toStrictEqual([])
        }).pipe(Effect.provide(RedisStreamsMemory.layer)),
      120_000
    )
  })
}
