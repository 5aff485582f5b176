/**
 * `sluice normalize --provider P [--events] [--non-streaming] FILE`: a recorded
 * provider response into the turn summary, or into StreamEvents with `--events`
 * (docs/cli.md#normalize). What it runs is loaded when it runs.
 *
 * @since 0.1.0
 */
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as CommandOptions from "../CommandOptions.js"

/**
 * The flags and arguments of `normalize`, as the parser reads them.
 *
 * @since 0.2.0
 * @category options
 */
export const options = {
  provider: CommandOptions.provider,
  events: Flag.Boolean("events").pipe(
    Flag.withDefault(false),
    Flag.withDescription("print the StreamEvents, one JSON object a line")
  ),
  nonStreaming: Flag.Boolean("non-streaming").pipe(
    Flag.withDefault(false),
    Flag.withDescription("read a non-streaming JSON response instead of an SSE body")
  ),
  file: CommandOptions.file
}

/**
 * The parsed options of `normalize`.
 *
 * @since 0.1.0
 * @category models
 */
export type Args = Command.Command.Config.Infer<typeof options>

/**
 * The `normalize` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "normalize",
  options,
  (args) => Effect.flatMap(Effect.promise(() => import("../internal/normalize.js")), (run) => run.normalize(args))
).pipe(Command.withDescription("normalize a recorded provider response into the turn summary or StreamEvents"))
