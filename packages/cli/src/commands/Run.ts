/**
 * `sluice run --provider P --model M [--system S] [--base-url U] [--json] PROMPT`: one
 * live turn, from the prompt to published upserts. The request goes to the provider
 * (retried with key rotation as `ProviderClient` does), the answer is printed as it
 * streams (reasoning dimmed on a terminal, tool calls shown), the turn is published
 * like `replay` does (Redis at `--redis-url`, else the embedded store), and the summary
 * ends the output. `--json` prints the summary only.
 *
 * Keys come from `OPENAI_API_KEY`, `ANTHROPIC_API_KEY` or `GEMINI_API_KEY` (several as a
 * comma-separated list, rotated in order); the base URL from `--base-url`, else
 * `OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL` or `GEMINI_BASE_URL`, else the provider's.
 * A missing key or a base URL that is not an http(s) URL is bad usage (exit code 2).
 * A turn the provider ended with an error prints its summary in full (`"status":
 * "error"`, the errors named) and exits 1. Retry notices are log lines, on standard
 * error.
 *
 * What it runs is loaded when it runs.
 *
 * @since 0.1.0
 */
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as CommandOptions from "../CommandOptions.js"
import * as EnvOptions from "../EnvOptions.js"

/**
 * The flags and arguments of `run`, as the parser reads them.
 *
 * @since 0.2.0
 * @category options
 */
export const options = {
  provider: CommandOptions.providerOption("the wire API to call"),
  model: EnvOptions.requiredText("model", "SLUICE_MODEL", "the model id"),
  system: EnvOptions.optionalText("system", "SLUICE_SYSTEM", "the system prompt"),
  baseUrl: Flag.String("base-url").pipe(
    Flag.withDescription(
      "the provider's base URL, as its SDK takes it (default: *_BASE_URL from the environment, else the provider's)"
    ),
    Flag.optional
  ),
  timeout: EnvOptions.integer(
    "timeout",
    "SLUICE_TIMEOUT",
    300,
    "seconds the provider may stay silent (no response, or no byte of the body) before the attempt is retried"
  ),
  json: Flag.Boolean("json").pipe(Flag.withDefault(false), Flag.withDescription("print the turn summary only")),
  turn: CommandOptions.turn,
  thread: CommandOptions.thread,
  traceparent: CommandOptions.traceparent,
  tracestate: CommandOptions.tracestate,
  prefix: CommandOptions.prefix,
  redisUrl: EnvOptions.redisUrl,
  prompt: Argument.String("PROMPT").pipe(Argument.withDescription("the user's message"))
}

/**
 * The parsed options of `run`.
 *
 * @since 0.1.0
 * @category models
 */
export type Args = Command.Command.Config.Infer<typeof options>

/**
 * The `run` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "run",
  options,
  (args) => Effect.flatMap(Effect.promise(() => import("../internal/run.js")), (run) => run.run(args))
).pipe(
  Command.withDescription(
    "call a provider with a prompt: print the answer as it streams, publish the turn, end with its summary"
  )
)
