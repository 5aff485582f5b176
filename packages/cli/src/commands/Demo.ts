/**
 * `sluice demo` (`pnpm demo`): the turn server on the embedded in-memory store (or Redis
 * at `--redis-url`), on
 * loopback behind a fresh bearer token, with the bundled sample transcripts
 * (`packages/cli/samples`) replayed as turns at a provider's pace, a couple at a time,
 * round after round; it prints the page's signed link and serves until Ctrl-C (or
 * `--exit-after`). It takes the server options of `serve` (`--metrics-port`,
 * `--read-tokens`, ...). What it runs is loaded when it runs.
 *
 * @since 0.1.0
 */
import type { ProviderName } from "@sluice/providers/ProviderName"
import * as Command from "effect/cli/Command"
import * as Effect from "effect/Effect"
import * as CommandOptions from "../CommandOptions.js"
import * as EnvOptions from "../EnvOptions.js"
import * as ServerLimits from "../internal/serverLimits.js"

/**
 * The bundled transcripts, in the order they are played, with their providers.
 *
 * @since 0.1.0
 * @category constants
 */
export const samples: ReadonlyArray<{ readonly file: string; readonly provider: ProviderName }> = [
  { file: "anthropic-weather.sse", provider: "anthropic" },
  { file: "openai-responses-laptops.sse", provider: "openai-responses" },
  { file: "anthropic-tides-search.sse", provider: "anthropic" },
  { file: "gemini-trains.sse", provider: "gemini" },
  { file: "openai-chat-sourdough.sse", provider: "openai-chat" },
  { file: "anthropic-overloaded.sse", provider: "anthropic" }
]

/**
 * The flags and arguments of `demo`, as the parser reads them.
 *
 * @since 0.2.0
 * @category options
 */
export const options = {
  port: EnvOptions.integer("port", "SLUICE_PORT", 8787, "the port to listen on (0: any free port)"),
  delayMs: EnvOptions.integer(
    "delay-ms",
    "SLUICE_DELAY_MS",
    30,
    "the mean delay between provider events, in milliseconds (each is drawn from 2/3 to 4/3 of it)"
  ),
  parallel: EnvOptions.integer("parallel", "SLUICE_PARALLEL", 2, "how many turns stream at once"),
  pauseMs: EnvOptions.integer(
    "pause-ms",
    "SLUICE_PAUSE_MS",
    2000,
    "the pause between two turns of one lane, in milliseconds"
  ),
  rounds: EnvOptions.optionalInteger(
    "rounds",
    "SLUICE_ROUNDS",
    "how many rounds of the samples to play (default: until stopped)"
  ),
  exitAfter: EnvOptions.optionalInteger(
    "exit-after",
    "SLUICE_EXIT_AFTER",
    "stop after this many seconds (for scripts and tests)"
  ),
  ...CommandOptions.server,
  ...ServerLimits.options
}

/**
 * The parsed options of `demo`.
 *
 * @since 0.1.0
 * @category models
 */
export type Args = Command.Command.Config.Infer<typeof options>

/**
 * The `demo` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "demo",
  options,
  (args) => Effect.flatMap(Effect.promise(() => import("../internal/demo.js")), (run) => run.demo(args))
).pipe(
  Command.withDescription(
    "serve the turn viewer and replay the sample transcripts into the store (Redis at --redis-url, or the embedded store)"
  )
)
