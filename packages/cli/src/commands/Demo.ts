/**
 * `sluice demo` (`pnpm demo`): the turn server on the embedded in-memory store (or Redis
 * at `--redis-url`), on
 * loopback behind a fresh bearer token, with the bundled sample transcripts
 * (`packages/cli/samples`) replayed as turns at a provider's pace, a couple at a time,
 * round after round; it prints the page's signed link and serves until Ctrl-C (or
 * `--exit-after`).
 *
 * @since 0.1.0
 */
import { Command } from "@effect/cli"
import type { FileSystem } from "@effect/platform"
import type { ProviderName } from "@sluice/providers"
import { type TurnContext, type TurnPipeline, TurnSource } from "@sluice/pipeline"
import { TurnKeys } from "@sluice/redis"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { randomBytes } from "node:crypto"
import { fileURLToPath } from "node:url"
import { badUsage, type CliFailure } from "../CliFailure.js"
import * as EnvOptions from "../EnvOptions.js"
import * as Input from "../Input.js"
import * as Output from "../Output.js"
import * as Serving from "../Serving.js"
import * as Publishing from "../Publishing.js"

/**
 * The bundled transcripts, in the order they are played, with their providers.
 *
 * @since 0.1.0
 * @category constants
 */
export const samples: ReadonlyArray<{ readonly file: string; readonly provider: ProviderName.ProviderName }> = [
  { file: "anthropic-weather.sse", provider: "anthropic" },
  { file: "openai-responses-laptops.sse", provider: "openai-responses" },
  { file: "anthropic-tides-search.sse", provider: "anthropic" },
  { file: "gemini-trains.sse", provider: "gemini" },
  { file: "openai-chat-sourdough.sse", provider: "openai-chat" },
  { file: "anthropic-overloaded.sse", provider: "anthropic" }
]

const samplesDir = fileURLToPath(new URL("../../samples/", import.meta.url))

/**
 * How the demo plays the samples.
 *
 * @since 0.1.0
 * @category models
 */
export interface DemoPace {
  /** The mean wait before each provider event; each wait is drawn from 2/3 to 4/3 of it. */
  readonly eventDelay: Duration.Duration
  /** How many turns stream at once. */
  readonly parallel: number
  /** The pause between two turns of one lane. */
  readonly pause: Duration.Duration
  /** How many rounds of the samples; `None` plays until interrupted. */
  readonly rounds: Option.Option<number>
}

// One sample as a fresh turn, published to Stream A and Stream B as it streams.
const playSample = (sample: (typeof samples)[number], eventDelay: Duration.Duration) =>
  Effect.gen(function* () {
    const context = yield* Publishing.contextOf(Option.none(), Option.none())
    const turnId = context.turnId
    yield* Output.line(`  turn ${turnId}  ${sample.file}: streaming`)
    const events = TurnSource.sse(sample.provider, Input.bytes(`${samplesDir}${sample.file}`))
    const paced = (turn: TurnContext.TurnContext) =>
      events(turn).pipe(Stream.schedule(Schedule.spaced(eventDelay).pipe(Schedule.jitteredWith({ min: 2 / 3, max: 4 / 3 }))))
    const turn = yield* Publishing.publish(context, paced)
    yield* Output.line(`  turn ${turnId}  ${sample.file}: ${turn.status}`)
  })

/**
 * Plays the samples into the publisher in context: `parallel` lanes, lane `k` playing
 * samples `k`, `k + parallel`, ... of each round, with `pause` between its turns.
 *
 * @since 0.1.0
 * @category pipeline
 */
export const play = (
  pace: DemoPace
): Effect.Effect<void, CliFailure, FileSystem.FileSystem | TurnPipeline.TurnPipeline | Output.Output> =>
  Effect.forEach(
    Array.from({ length: pace.parallel }, (_, lane) => samples.filter((_, i) => i % pace.parallel === lane)),
    (lane) => {
      const round = Effect.forEach(lane, (sample) => Effect.zipRight(playSample(sample, pace.eventDelay), Effect.sleep(pace.pause)), {
        discard: true
      })
      return Option.match(pace.rounds, {
        onNone: () => Effect.forever(round),
        onSome: (rounds) => Effect.repeatN(round, rounds - 1)
      })
    },
    { concurrency: "unbounded", discard: true }
  )

const positive = (name: string, value: number): Effect.Effect<number, CliFailure> =>
  value >= 1 ? Effect.succeed(value) : Effect.fail(badUsage(`--${name} must be a positive integer, got ${value}`))

/**
 * The `demo` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "demo",
  {
    port: EnvOptions.integer("port", "SLUICE_PORT", 8787, "the port to listen on (0: any free port)"),
    delayMs: EnvOptions.integer(
      "delay-ms",
      "SLUICE_DELAY_MS",
      30,
      "the mean delay between provider events, in milliseconds (each is drawn from 2/3 to 4/3 of it)"
    ),
    parallel: EnvOptions.integer("parallel", "SLUICE_PARALLEL", 2, "how many turns stream at once"),
    pauseMs: EnvOptions.integer("pause-ms", "SLUICE_PAUSE_MS", 2000, "the pause between two turns of one lane, in milliseconds"),
    rounds: EnvOptions.optionalInteger("rounds", "SLUICE_ROUNDS", "how many rounds of the samples to play (default: until stopped)"),
    exitAfter: EnvOptions.optionalInteger("exit-after", "SLUICE_EXIT_AFTER", "stop after this many seconds (for scripts and tests)"),
    linkTtlMinutes: Serving.linkTtlOption,
    redisUrl: EnvOptions.redisUrl
  },
  (args) =>
    Effect.gen(function* () {
      if (args.delayMs < 0) return yield* Effect.fail(badUsage("--delay-ms must not be negative"))
      if (args.pauseMs < 0) return yield* Effect.fail(badUsage("--pause-ms must not be negative"))
      const parallel = yield* positive("parallel", args.parallel)
      const rounds = yield* Effect.transposeOption(Option.map(args.rounds, (n) => positive("rounds", n)))
      const exitAfter = yield* Effect.transposeOption(Option.map(args.exitAfter, (n) => positive("exit-after", n)))
      const ttl = yield* Serving.linkTtl(args.linkTtlMinutes)
      // A bearer token of this process only: the page gets a signed link derived from it.
      const token = randomBytes(24).toString("base64url")
      const running = yield* Serving.start({ port: args.port, host: "127.0.0.1", prefix: TurnKeys.defaultPrefix, tokens: [token] })
      const url = yield* running.pageUrl(ttl)
      const api = url.slice(0, url.indexOf("/#"))
      yield* Output.line(
        [
          `Sluice demo: the sample transcripts replayed as turns into ${Publishing.storeName(args.redisUrl)},`,
          `${parallel} at a time, one provider event every ~${args.delayMs} ms.`,
          "",
          `  Open ${url}`,
          `  (the link lets this browser tab read the turns for ${args.linkTtlMinutes} minutes)`,
          "",
          `  API: curl -H "Authorization: Bearer ${token}" ${api}/v1/turns`,
          "",
          Option.match(exitAfter, { onNone: () => "Ctrl-C stops it.", onSome: (s) => `Stops after ${s} s.` })
        ].join("\n")
      )
      const replay = play({ eventDelay: Duration.millis(args.delayMs), parallel, pause: Duration.millis(args.pauseMs), rounds }).pipe(
        Effect.zipRight(Output.line("demo: every round played; still serving"))
      )
      const serving = Effect.zipRight(replay, Effect.never)
      yield* Option.match(exitAfter, {
        onNone: () => serving,
        onSome: (seconds) =>
          Effect.raceFirst(serving, Effect.sleep(Duration.seconds(seconds))).pipe(
            Effect.zipRight(Output.line(`demo: stopped after ${seconds} s`))
          )
      })
    }).pipe(
      Effect.scoped,
      Effect.provide(Layer.provideMerge(Publishing.pipelineLayer(TurnKeys.defaultPrefix), Publishing.storeLayer(args.redisUrl)))
    )
).pipe(Command.withDescription("serve the turn viewer and replay the sample transcripts into the store (Redis at --redis-url, or the embedded store)"))
