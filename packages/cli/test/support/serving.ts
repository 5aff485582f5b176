/**
 * `sluice serve` run in process for the length of the scope, with `env` for its
 * environment, for tests that talk to it over HTTP.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Cli } from "../../src/index.js"
import { lines, takeUntil } from "./lines.js"

/** Serves (`sluice serve --port 0 ...args`); the base address of the API once it listens. */
export const serving = (env: Record<string, string>, ...args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const output = yield* lines
    yield* Effect.forkScoped(
      Cli.run(["node", "sluice", "serve", "--port", "0", ...args]).pipe(
        Effect.provide(Layer.merge(NodeServices.layer, output.layer)),
        Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))
      )
    )
    const link = new URL(
      (yield* takeUntil(output.queue, (line) => line.startsWith("the turn viewer: "))).slice("the turn viewer: ".length)
    )
    return `${link.protocol}//${link.host}`
  })
