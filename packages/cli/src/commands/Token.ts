/**
 * `sluice token --thread ID [--scope read|write] [--ttl 1h]`: mints a thread token
 * (docs/threads.md#http) signed with the key of `SLUICE_API_TOKENS`, as an
 * application's backend would with `ThreadToken.mint`, and prints it alone on standard
 * output. What it runs is loaded when it runs.
 *
 * @since 0.3.0
 */
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"

/**
 * The flags of `token`, as the parser reads them.
 *
 * @since 0.3.0
 * @category options
 */
export const options = {
  thread: Flag.String("thread").pipe(
    Flag.withDescription("the thread the token is for (1 to 128 letters, digits, '.', '_', ':' or '-')")
  ),
  scope: Flag.Literals("scope", ["read", "write"]).pipe(
    Flag.withDefault("write" as const),
    Flag.withDescription("read: the thread and its turns; write: that, starting and cancelling its turns (default)")
  ),
  ttl: Flag.String("ttl").pipe(
    Flag.withDefault("1h"),
    Flag.withDescription("how long the token lives: <n>s, <n>m, <n>h or <n>d (default 1h)")
  )
}

/**
 * The parsed options of `token`.
 *
 * @since 0.3.0
 * @category models
 */
export type Args = Command.Command.Config.Infer<typeof options>

/**
 * The `token` command.
 *
 * @since 0.3.0
 * @category commands
 */
export const command = Command.make(
  "token",
  options,
  (args) => Effect.flatMap(Effect.promise(() => import("../internal/token.js")), (run) => run.token(args))
).pipe(
  Command.withDescription(
    "print a thread token (for a browser: one thread, read or write) signed with SLUICE_API_TOKENS"
  )
)
