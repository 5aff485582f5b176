/**
 * The flags of `sluice serve` for threads (docs/threads.md#http): what a client may
 * choose (`--thread-providers`, `--thread-models`, `--thread-tools`, `--thread-system`)
 * and the limits of each thread token (`--thread-turns-per-minute`,
 * `--max-streams-per-thread-token`); each from its flag, else its variable, else its
 * default. And the services that serve threads on the store: `Threads` on the same
 * `RedisStreams` as the server, and the starter of their turns.
 *
 * @internal
 */
import type { TurnPipeline, TurnRequest } from "@sluice/pipeline"
import { LlmRequest, type ProviderClient, ProviderName } from "@sluice/providers"
import type { RedisStreams } from "@sluice/redis"
import { ThreadStarter, TurnServerOptions } from "@sluice/server"
import { Threads } from "@sluice/turns"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { readFileSync } from "node:fs"
import { badUsage, type CliFailure } from "../CliFailure.js"
import * as EnvOptions from "../EnvOptions.js"
import * as ThreadStarts from "../ThreadStarts.js"

/**
 * The flags, spread into the command's options.
 *
 * @internal
 */
export const options = {
  threadProviders: EnvOptions.text(
    "thread-providers",
    "SLUICE_THREAD_PROVIDERS",
    ProviderName.ProviderName.literals.join(","),
    "the providers a thread's turn may ask for, comma-separated; the first is the default"
  ),
  threadModels: EnvOptions.optionalText(
    "thread-models",
    "SLUICE_THREAD_MODELS",
    "the models a thread's turn may ask for, comma-separated; the first is the default (none: a turn names any)"
  ),
  threadTools: EnvOptions.optionalText(
    "thread-tools",
    "SLUICE_THREAD_TOOLS",
    "a JSON file of tool definitions ([{name, description, parameters}]) a thread's turn may name"
  ),
  threadSystem: EnvOptions.optionalText(
    "thread-system",
    "SLUICE_THREAD_SYSTEM",
    "the system prompt of every thread's turn"
  ),
  threadTurnsPerMinute: EnvOptions.integer(
    "thread-turns-per-minute",
    "SLUICE_THREAD_TURNS_PER_MINUTE",
    TurnServerOptions.threadDefaults.threadTurnsPerMinute,
    "the turns one thread token may start a minute; more get 429 rate_limited with Retry-After"
  ),
  maxStreamsPerThreadToken: EnvOptions.integer(
    "max-streams-per-thread-token",
    "SLUICE_MAX_STREAMS_PER_THREAD_TOKEN",
    TurnServerOptions.threadDefaults.maxStreamsPerThreadToken,
    "the most streams one thread token may hold open at once; more get 429"
  )
}

/**
 * The parsed flags.
 *
 * @internal
 */
export interface Args {
  readonly threadProviders: string
  readonly threadModels: Option.Option<string>
  readonly threadTools: Option.Option<string>
  readonly threadSystem: Option.Option<string>
  readonly threadTurnsPerMinute: number
  readonly maxStreamsPerThreadToken: number
}

const list = (text: string): ReadonlyArray<string> =>
  text.split(",").map((item) => item.trim()).filter((item) => item !== "")

const isProvider = Schema.is(ProviderName.ProviderName)
const decodeTools = Schema.decodeUnknownEffect(Schema.fromJsonString(Schema.Array(LlmRequest.ToolDefinition)))

/**
 * The thread policy of the flags; a provider that is not one, a tools file that cannot
 * be read or is not a list of tool definitions, is bad usage.
 *
 * @internal
 */
export const policy = (args: Args): Effect.Effect<ThreadStarts.ThreadPolicy, CliFailure> =>
  Effect.gen(function*() {
    const providers = list(args.threadProviders)
    const bad = providers.find((provider) => !isProvider(provider))
    if (providers.length === 0 || bad !== undefined) {
      return yield* badUsage(
        `--thread-providers: ${bad === undefined ? "none given" : JSON.stringify(bad)}: expected some of ` +
          ProviderName.ProviderName.literals.join(", ")
      )
    }
    const tools = yield* Option.match(args.threadTools, {
      onNone: () => Effect.succeed([]),
      onSome: (path) =>
        Effect.try({
          try: () => readFileSync(path, "utf8"),
          catch: (error) => badUsage(`--thread-tools: ${String(error)}`)
        })
          .pipe(
            Effect.flatMap((text) =>
              Effect.mapError(decodeTools(text), (error) => badUsage(`--thread-tools ${path}: ${error.message}`))
            )
          )
    })
    return {
      providers: providers.filter(isProvider),
      models: Option.match(args.threadModels, { onNone: () => [], onSome: list }),
      tools,
      ...Option.match(args.threadSystem, { onNone: () => ({}), onSome: (system) => ({ system }) })
    }
  })

/**
 * The server options of the limits, each positive.
 *
 * @internal
 */
export const serverOptions = (args: Args): Effect.Effect<TurnServerOptions.Options, CliFailure> =>
  args.threadTurnsPerMinute < 1
    ? Effect.fail(badUsage(`--thread-turns-per-minute must be a positive integer, got ${args.threadTurnsPerMinute}`))
    : args.maxStreamsPerThreadToken < 1
    ? Effect.fail(
      badUsage(`--max-streams-per-thread-token must be a positive integer, got ${args.maxStreamsPerThreadToken}`)
    )
    : Effect.succeed({
      threadTurnsPerMinute: args.threadTurnsPerMinute,
      maxStreamsPerThreadToken: args.maxStreamsPerThreadToken
    })

/**
 * `Threads` on the `RedisStreams` in context (the server's store, the embedded one
 * included) under the prefix, and the starter of their turns on the pipeline: the
 * services `TurnServer.layer` serves threads with, for the scope.
 *
 * @internal
 */
export const services = (
  prefix: string,
  threadPolicy: ThreadStarts.ThreadPolicy,
  clientFor: (
    provider: ProviderName.ProviderName
  ) => Effect.Effect<ProviderClient.Client, TurnRequest.ProviderUnavailable>
): Effect.Effect<
  Context.Context<Threads.Threads | ThreadStarter.ThreadStarter>,
  CliFailure,
  RedisStreams.RedisStreams | TurnPipeline.TurnPipeline | Scope.Scope
> =>
  Effect.gen(function*() {
    const threads = yield* Layer.build(Threads.layer({ prefix })).pipe(
      Effect.mapError((error) => badUsage(error.message))
    )
    const starter = yield* ThreadStarts.make(threadPolicy, clientFor)
    return Context.add(threads, ThreadStarter.ThreadStarter, starter)
  })
