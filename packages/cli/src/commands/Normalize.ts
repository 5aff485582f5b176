/**
 * `sluice normalize --provider P [--events] [--non-streaming] FILE`: a recorded
 * provider response into the turn summary, or into StreamEvents with `--events`
 * (docs/cli.md#normalize). What it runs is loaded when it runs.
 *
 * @since 0.1.0
 */
import { Command, Options } from "@effect/cli"
import * as Effect from "effect/Effect"
import * as CommandOptions from "../CommandOptions.js"

const options = {
  provider: CommandOptions.provider,
  events: Options.boolean("events").pipe(Options.withDescription("print the StreamEvents, one JSON object a line")),
  nonStreaming: Options.boolean("non-streaming").pipe(
    Options.withDescription("read a non-streaming JSON response instead of an SSE body")
  ),
  file: CommandOptions.file
}

/**
 * The parsed options of `normalize`.
 *
 * @since 0.3.0
 * @category models
 */
export type Args = Command.Command.ParseConfig<typeof options>

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
