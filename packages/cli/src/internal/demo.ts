/**
 * What `sluice demo` runs, loaded when it runs: the turn server with the bundled
 * sample transcripts replayed into the store as turns.
 *
 * @internal
 */
import { type TurnContext, type TurnPipeline, TurnSource } from "@sluice/pipeline"
import { ProviderHttp } from "@sluice/providers"
import { TurnKeys } from "@sluice/turns"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { randomBytes } from "node:crypto"
import { fileURLToPath } from "node:url"
import { badUsage, type CliFailure } from "../CliFailure.js"
import * as Demo from "../commands/Demo.js"
import * as Input from "../Input.js"
import * as Output from "../Output.js"
import * as Publishing from "../Publishing.js"
import * as Serving from "../Serving.js"
import * as ThreadStarts from "../ThreadStarts.js"
import * as TurnStarts from "../TurnStarts.js"
import * as ServerLimits from "./serverLimits.js"
import * as ThreadOptions from "./threadOptions.js"

const samplesDir = fileURLToPath(new URL("../../samples/", import.meta.url))

/**
 * How the demo plays the samples.
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
const playSample = (sample: (typeof Demo.samples)[number], eventDelay: Duration.Duration) =>
  Effect.gen(function*() {
    const context = yield* Publishing.contextOf(Option.none(), Option.none())
    const turnId = context.turnId
    yield* Output.line(`  turn ${turnId}  ${sample.file}: streaming`)
    const events = TurnSource.sse(sample.provider, Input.bytes(`${samplesDir}${sample.file}`))
    const paced = (turn: TurnContext.TurnContext) =>
      events(turn).pipe(
        Stream.schedule(
          Schedule.spaced(eventDelay).pipe(
            Schedule.modifyDelay(({ duration }) =>
              Effect.map(Random.nextBetween(2 / 3, 4 / 3), (factor) => Duration.times(duration, factor))
            )
          )
        )
      )
    const turn = yield* Publishing.publish(context, paced)
    yield* Output.line(`  turn ${turnId}  ${sample.file}: ${turn.status}`)
  })

/**
 * Plays the samples into the publisher in context: `parallel` lanes, lane `k` playing
 * samples `k`, `k + parallel`, ... of each round, with `pause` between its turns.
 */
export const play = (
  pace: DemoPace
): Effect.Effect<void, CliFailure, FileSystem.FileSystem | TurnPipeline.TurnPipeline | Output.Output> =>
  Effect.forEach(
    Array.from({ length: pace.parallel }, (_, lane) => Demo.samples.filter((_, i) => i % pace.parallel === lane)),
    (lane) => {
      const round = Effect.forEach(lane, (sample) =>
        Effect.andThen(playSample(sample, pace.eventDelay), Effect.sleep(pace.pause)), {
        discard: true
      })
      return Option.match(pace.rounds, {
        onNone: () =>
          Effect.forever(round),
        onSome: (rounds) =>
          Effect.repeat(round, { times: rounds - 1 })
      })
    },
    { concurrency: "unbounded", discard: true }
  )

const positive = (name: string, value: number): Effect.Effect<number, CliFailure> =>
  value >= 1 ? Effect.succeed(value) : Effect.fail(badUsage(`--${name} must be a positive integer, got ${value}`))

/** Runs `sluice demo` until interrupted, or for `--exit-after` seconds. */
export const demo = (args: Demo.Args): Effect.Effect<void, CliFailure, FileSystem.FileSystem | Output.Output> =>
  Effect.gen(function*() {
    if (args.delayMs < 0) return yield* Effect.fail(badUsage("--delay-ms must not be negative"))
    if (args.pauseMs < 0) return yield* Effect.fail(badUsage("--pause-ms must not be negative"))
    const parallel = yield* positive("parallel", args.parallel)
    const rounds = yield* Effect.transposeOption(Option.map(args.rounds, (n) => positive("rounds", n)))
    const exitAfter = yield* Effect.transposeOption(Option.map(args.exitAfter, (n) => positive("exit-after", n)))
    const ttl = yield* Serving.linkTtl(args.linkTtlMinutes)
    // A bearer token of this process only: the page gets a signed link derived from it.
    const token = randomBytes(24).toString("base64url")
    // threads on the same store, their turns with the providers' live clients (an API
    // key in the environment), as sluice serve's with its default policy
    const clientFor = yield* TurnStarts.clients.pipe(Effect.provide(ProviderHttp.layer))
    const threads = yield* ThreadOptions.services(TurnKeys.defaultPrefix, ThreadStarts.defaultPolicy, clientFor)
    const running = yield* Serving.start({
      port: args.port,
      host: "127.0.0.1",
      prefix: TurnKeys.defaultPrefix,
      tokens: [token],
      ...(yield* Serving.serverOptions(args)),
      ...(yield* ServerLimits.serverOptions(args))
    }).pipe(Effect.provideContext(threads))
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
    const replay = play({
      eventDelay: Duration.millis(args.delayMs),
      parallel,
      pause: Duration.millis(args.pauseMs),
      rounds
    }).pipe(
      Effect.andThen(Output.line("demo: every round played; still serving"))
    )
    const serving = Effect.andThen(replay, Effect.never)
    yield* Option.match(exitAfter, {
      onNone: () => serving,
      onSome: (seconds) =>
        Effect.raceFirst(serving, Effect.sleep(Duration.seconds(seconds))).pipe(
          Effect.andThen(Output.line(`demo: stopped after ${seconds} s`))
        )
    })
  }).pipe(
    Effect.scoped,
    Effect.provide(
      Layer.unwrap(Effect.map(ServerLimits.durableLimits(args), (limits) =>
        Layer.provideMerge(
          Publishing.pipelineLayer(TurnKeys.defaultPrefix),
          Layer.merge(
            Publishing.storeLayer(args.redisUrl),
            Publishing.durableStoreLayer(args.redisUrl, TurnKeys.defaultPrefix, limits)
          )
        )))
    )
  )
