/**
 * `sluice serve [--port N]`: the HTTP API over Redis Streams (`--redis-url`) or the
 * embedded in-memory store, with bearer tokens from `SLUICE_API_TOKENS` (and read-only
 * ones from `--read-tokens`), Durable Streams of clients' own beside the turns,
 * `/metrics` and the probes on `--metrics-port`, and the turn viewer page at `/`, whose
 * signed link it prints; request bodies bounded (`--max-body-bytes`,
 * `--max-subscription-body-bytes`), connections kept alive `--keep-alive-timeout-ms`,
 * answers' URLs from `--public-url`, new turns refused past `--max-turns` turns running
 * at once or while the process runs `--max-lag-ms` late, and one shutdown budget
 * (`--shutdown-timeout-ms`), and threads (`/v1/threads/...`: what a client may choose,
 * `--thread-providers`, `--thread-models`, `--thread-tools`, `--thread-system`; each
 * thread token's limits, `--thread-turns-per-minute`, `--max-streams-per-thread-token`).
 * What it runs is loaded when it runs.
 *
 * @since 0.1.0
 */
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as CommandOptions from "../CommandOptions.js"
import * as EnvOptions from "../EnvOptions.js"
import * as ServerLimits from "../internal/serverLimits.js"
import * as ThreadOptions from "../internal/threadOptions.js"
// the options module alone: the command's definition loads no server at start-up
import * as TurnServerOptions from "@sluice/server/TurnServerOptions"

/**
 * The flags and arguments of `serve`, as the parser reads them.
 *
 * @since 0.2.0
 * @category options
 */
export const options = {
  port: EnvOptions.integer("port", "SLUICE_PORT", 8787, "the port to listen on"),
  host: EnvOptions.optionalText(
    "host",
    "SLUICE_HOST",
    "the address to bind: all addresses by default, loopback with --insecure-local"
  ),
  insecureLocal: Flag.Boolean("insecure-local").pipe(
    Flag.withDefault(false),
    Flag.withDescription("serve without tokens, on loopback only (for local development)")
  ),
  prefix: CommandOptions.prefix,
  maxTurns: EnvOptions.integer(
    "max-turns",
    "SLUICE_MAX_TURNS",
    1000,
    "the most turns POST /v1/turns runs at once in this process; one more gets 503 at_capacity"
  ),
  maxLagMs: EnvOptions.integer(
    "max-lag-ms",
    "SLUICE_MAX_LAG_MS",
    2000,
    "while this process runs its timers later than this, in milliseconds, POST /v1/turns gets 503 at_capacity"
  ),
  shutdownTimeoutMs: EnvOptions.integer(
    "shutdown-timeout-ms",
    "SLUICE_SHUTDOWN_TIMEOUT_MS",
    TurnServerOptions.shutdownTimeoutDefault,
    "how long stopping (SIGTERM, SIGINT) may take, in milliseconds: running turns get half of it to end, " +
      "then end aborted; the process exits within it (keep it below the container's stop timeout)"
  ),
  ...CommandOptions.server,
  ...ServerLimits.options,
  ...ThreadOptions.options
}

/**
 * The parsed options of `serve`.
 *
 * @since 0.1.0
 * @category models
 */
export type Args = Command.Command.Config.Infer<typeof options>

/**
 * The `serve` command. Runs until interrupted (Ctrl-C).
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "serve",
  options,
  (args) => Effect.flatMap(Effect.promise(() => import("../internal/serve.js")), (run) => run.serve(args))
).pipe(
  Command.withDescription(
    "serve the turn API (SSE per turn with resume, snapshots, Durable Streams) and the turn viewer page"
  )
)
