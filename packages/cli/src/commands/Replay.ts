/**
 * `sluice replay --provider P FILE`: a recorded transcript through the whole pipeline,
 * normalize -> Stream A, and -> upserts -> Stream B, into Redis when `--redis-url` is
 * set and the embedded in-memory store otherwise. What it runs is loaded when it runs.
 *
 * @since 0.1.0
 */
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as CommandOptions from "../CommandOptions.js"
import * as EnvOptions from "../EnvOptions.js"

/**
 * The flags and arguments of `replay`, as the parser reads them.
 *
 * @since 0.2.0
 * @category options
 */
export const options = {
  provider: CommandOptions.provider,
  file: CommandOptions.file,
  turn: CommandOptions.turn,
  thread: CommandOptions.thread,
  traceparent: CommandOptions.traceparent,
  tracestate: CommandOptions.tracestate,
  pace: EnvOptions.choiceOr(
    "pace",
    ["realtime", "fast"],
    "SLUICE_PACE",
    "fast",
    "realtime: one provider event every --delay-ms; fast: as fast as the pipeline goes"
  ),
  delayMs: EnvOptions.integer(
    "delay-ms",
    "SLUICE_DELAY_MS",
    25,
    "the delay between provider events at realtime pace, in milliseconds"
  ),
  jsonl: Flag.Boolean("jsonl").pipe(
    Flag.withDefault(false),
    Flag.withDescription("print exactly one StreamBMessage JSON object a line, nothing else")
  ),
  prefix: CommandOptions.prefix,
  redisUrl: EnvOptions.redisUrl
}

/**
 * The parsed options of `replay`.
 *
 * @since 0.1.0
 * @category models
 */
export type Args = Command.Command.Config.Infer<typeof options>

/**
 * The `replay` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "replay",
  options,
  (args) => Effect.flatMap(Effect.promise(() => import("../internal/replay.js")), (run) => run.replay(args))
).pipe(Command.withDescription("replay a recorded transcript through normalize, upserts and Redis Streams A and B"))
