/**
 * The command run in process, as the tests run it: the given environment as its
 * configuration, its output collected.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { expect } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Cli, Output } from "../../src/index.js"

/** Runs `sluice ...args` with `env` for its environment; its exit code and what it wrote. */
export const sluice = (
  env: Record<string, string>,
  args: ReadonlyArray<string>,
  options: { readonly isTTY?: boolean; readonly stderrStyled?: boolean; readonly columns?: number } = {}
) =>
  Effect.gen(function*() {
    const output = Output.memory(options)
    const exit = yield* Cli.run(["node", "sluice", ...args]).pipe(
      Effect.provide(Layer.merge(NodeServices.layer, output.layer)),
      Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })),
      Effect.exit
    )
    return { code: Cli.exitCode(exit), stdout: output.stdout(), stderr: output.stderr() }
  })

/**
 * Runs `sluice serve` (with `--insecure-local`) and `sluice demo`, each on port 0 with
 * each case's flags: every one is bad usage, exit code 2 and its message as the one
 * line on stderr.
 */
export const badUsageOfServeAndDemo = (
  cases: ReadonlyArray<readonly [flags: ReadonlyArray<string>, message: string]>
) =>
  Effect.gen(function*() {
    for (const [flags, message] of cases) {
      for (const command of ["serve", "demo"]) {
        const result = yield* sluice({}, [
          command,
          "--port",
          "0",
          ...(command === "serve" ? ["--insecure-local"] : []),
          ...flags
        ])
        expect([command, result.code, result.stderr.trimEnd().split("\n")]).toStrictEqual([command, 2, [message]])
      }
    }
  })
