/**
 * What `sluice token` runs: a thread token minted with the key of the bearer tokens in
 * `SLUICE_API_TOKENS`, printed alone.
 *
 * @internal
 */
import { ThreadToken, TurnServerOptions } from "@sluice/server"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { badUsage, type CliFailure } from "../CliFailure.js"
import type * as Token from "../commands/Token.js"
import * as Output from "../Output.js"

const units: Readonly<Record<string, number>> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/**
 * A `--ttl` in milliseconds: `<n>s`, `<n>m`, `<n>h` or `<n>d`, at most 365 days.
 *
 * @internal
 */
export const ttlMs = (text: string): Effect.Effect<number, CliFailure> => {
  const match = /^([1-9]\d{0,5})([smhd])$/.exec(text.trim())
  const ms = match === null ? NaN : Number(match[1]) * units[match[2]!]!
  return Number.isFinite(ms) && ms <= 365 * units.d!
    ? Effect.succeed(ms)
    : Effect.fail(badUsage(`--ttl ${JSON.stringify(text)}: expected <n>s, <n>m, <n>h or <n>d, at most 365d`))
}

/** Runs `sluice token`. */
export const token = (args: Token.Args): Effect.Effect<void, CliFailure, Output.Output> =>
  Effect.gen(function*() {
    const expiresIn = yield* ttlMs(args.ttl)
    const tokens = yield* TurnServerOptions.tokensConfig.pipe(
      Effect.mapError((error) => badUsage(`SLUICE_API_TOKENS: ${error.message}`)),
      Effect.map(Option.getOrElse((): ReadonlyArray<string> => []))
    )
    if (tokens.length === 0) {
      return yield* badUsage("no API token to sign with: set SLUICE_API_TOKENS as the server has it")
    }
    const minted = yield* ThreadToken.mint({ key: tokens, threadId: args.thread, scope: args.scope, expiresIn }).pipe(
      Effect.mapError((error) => badUsage(`--${error.field === "threadId" ? "thread" : error.field}: ${error.reason}`))
    )
    yield* Output.line(minted)
  })
