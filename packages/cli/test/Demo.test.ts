/**
 * `sluice demo` and the page link of `sluice serve`, in process over real HTTP: the
 * samples become finished turns readable with the printed link, `--exit-after` ends
 * it, a taken port is said plainly.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { describe, expect, it } from "@effect/vitest"
import { TurnSnapshot } from "@sluice/server"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { createServer } from "node:net"
import { samples } from "../src/commands/Demo.js"
import { Cli, Output } from "../src/index.js"
import { lines, takeUntil } from "./support/lines.js"

const getJson = (url: string) =>
  Effect.tryPromise(async () => {
    const response = await fetch(url)
    return { status: response.status, body: (await response.json()) as unknown }
  })

const decodeList = Schema.decodeUnknownEffect(
  Schema.Struct({ turns: Schema.Array(Schema.Struct({ turnId: Schema.String, startedAt: Schema.Number })) })
)
const decodeSnapshot = Schema.decodeUnknownEffect(TurnSnapshot.TurnSnapshot)

const cli = (layer: Layer.Layer<Output.Output>, ...args: ReadonlyArray<string>) =>
  Cli.run(["node", "sluice", ...args]).pipe(Effect.provide(Layer.merge(NodeServices.layer, layer)))

describe("sluice demo", () => {
  it.live("replays every sample as a finished turn, readable with the printed link only", () =>
    Effect.gen(function*() {
      const output = yield* lines
      const fiber = yield* Effect.forkChild(
        cli(output.layer, "demo", "--port", "0", "--delay-ms", "0", "--pause-ms", "0", "--rounds", "1")
      )
      const open = yield* takeUntil(output.queue, (line) => line.trimStart().startsWith("Open "))
      const link = new URL(open.trim().slice("Open ".length))
      expect(link.hostname).toBe("127.0.0.1")
      const token = new URLSearchParams(link.hash.slice(1)).get("access_token")
      expect(token).toMatch(/^v1\.\d+\.read\./)
      yield* takeUntil(output.queue, (line) => line === "demo: every round played; still serving")
      const base = `${link.protocol}//${link.host}`
      expect((yield* getJson(`${base}/v1/turns`)).status).toBe(401)
      const list = yield* decodeList((yield* getJson(`${base}/v1/turns?access_token=${token}`)).body)
      expect(list.turns).toHaveLength(samples.length)
      const providers: Array<string> = []
      const errors: Array<string> = []
      for (const { turnId } of list.turns) {
        const snapshot = yield* decodeSnapshot(
          (yield* getJson(`${base}/v1/turns/${turnId}?access_token=${token}`)).body
        )
        // Every sample completes but anthropic-overloaded.sse, which ends in a provider error.
        expect(snapshot.status).toBe(snapshot.error === undefined ? "complete" : "error")
        if (snapshot.error !== undefined) errors.push(snapshot.error.code)
        expect(snapshot.items.length).toBeGreaterThan(0)
        providers.push(snapshot.providerId ?? "?")
      }
      expect(errors).toStrictEqual(["overloaded_error"])
      expect(providers.sort()).toStrictEqual(samples.map((sample) => sample.provider).sort())
      const page = yield* Effect.tryPromise(() => fetch(`${base}/`).then((response) => response.text()))
      expect(page).toContain("<title>Sluice turns</title>")
      yield* Fiber.interrupt(fiber)
    }), 60_000)

  it.live("--exit-after stops it with exit code 0", () =>
    Effect.gen(function*() {
      const output = Output.memory()
      const exit = yield* Effect.exit(cli(output.layer, "demo", "--port", "0", "--exit-after", "1", "--rounds", "1"))
      expect(Cli.exitCode(exit)).toBe(0)
      expect(output.stdout()).toContain("demo: stopped after 1 s")
    }))

  it.live("a taken port is bad usage, said plainly; so are bad numbers", () =>
    Effect.gen(function*() {
      const blocker = createServer()
      const port = yield* Effect.acquireRelease(
        Effect.callback<number>((resume) => {
          blocker.listen(0, "127.0.0.1", () => {
            const address = blocker.address()
            resume(Effect.succeed(typeof address === "object" && address !== null ? address.port : 0))
          })
        }),
        () => Effect.callback<void>((resume) => void blocker.close(() => resume(Effect.void)))
      )
      for (
        const [args, message] of [
          [["--port", String(port)], `port ${port} is taken`],
          [["--parallel", "0"], "--parallel must be a positive integer"],
          [["--pause-ms", "-1"], "--pause-ms must not be negative"],
          [["--exit-after", "0"], "--exit-after must be a positive integer"],
          [["--link-ttl-minutes", "0"], "--link-ttl-minutes must be from 1"]
        ] as const
      ) {
        const output = Output.memory()
        const exit = yield* Effect.exit(cli(output.layer, "demo", ...args).pipe(Effect.provide(output.layer)))
        expect(Cli.exitCode(exit)).toBe(2)
        expect(output.stderr()).toContain(message)
      }
    }).pipe(Effect.scoped))
})

describe("sluice serve", () => {
  it.live("prints the page's link: signed with a token from SLUICE_API_TOKENS, bare with --insecure-local", () =>
    Effect.gen(function*() {
      const output = yield* lines
      const fiber = yield* Effect.forkChild(cli(output.layer, "serve", "--port", "0", "--insecure-local"))
      const line = yield* takeUntil(output.queue, (text) => text.startsWith("the turn viewer: "))
      expect(line).toMatch(/^the turn viewer: http:\/\/127\.0\.0\.1:\d+\/$/)
      yield* Fiber.interrupt(fiber)

      const secured = yield* lines
      const serving = yield* Effect.forkChild(
        cli(secured.layer, "serve", "--port", "0", "--host", "127.0.0.1", "--link-ttl-minutes", "5").pipe(
          Effect.provideService(
            ConfigProvider.ConfigProvider,
            ConfigProvider.fromEnv({ env: { SLUICE_API_TOKENS: "serve-test-token" } })
          )
        )
      )
      const link = new URL((yield* takeUntil(secured.queue, (text) => text.startsWith("the turn viewer: "))).slice(17))
      const token = new URLSearchParams(link.hash.slice(1)).get("access_token")
      expect(token).toMatch(/^v1\.\d+\.read\./)
      const base = `${link.protocol}//${link.host}`
      expect((yield* getJson(`${base}/v1/turns?access_token=${token}`)).body).toStrictEqual({ turns: [] })
      expect((yield* getJson(`${base}/v1/turns?access_token=${token}x`)).status).toBe(401)
      expect(yield* takeUntil(secured.queue, (text) => text.includes("valid for"))).toContain("valid for 5 minutes")
      yield* Fiber.interrupt(serving)
    }))
})
