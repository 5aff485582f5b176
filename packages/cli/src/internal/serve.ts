/**
 * What `sluice serve` runs, loaded when it runs: the turn server on the store, with
 * Durable Streams, the turns `POST /v1/turns` starts and threads (`/v1/threads/...`),
 * until interrupted.
 *
 * @internal
 */
import { ProviderHttp } from "@sluice/providers"
import { TurnStarter } from "@sluice/server"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { CliFailure } from "../CliFailure.js"
import type * as Serve from "../commands/Serve.js"
import * as Output from "../Output.js"
import * as Publishing from "../Publishing.js"
import * as Serving from "../Serving.js"
import * as TurnStarts from "../TurnStarts.js"
import * as ServerLimits from "./serverLimits.js"
import * as ThreadOptions from "./threadOptions.js"

/**
 * The turns' share of a shutdown budget: half of it to end by themselves (`graceMs`),
 * a quarter to write their `aborted` endings (`drainMs`).
 */
export const shutdownPlan = (budgetMs: number) => ({
  graceMs: Math.floor(budgetMs / 2),
  drainMs: Math.max(1, Math.floor(budgetMs / 4))
})

/** Runs `sluice serve` until interrupted. */
export const serve = (args: Serve.Args): Effect.Effect<never, CliFailure, Output.Output> =>
  Effect.gen(function*() {
    const ttl = yield* Serving.linkTtl(args.linkTtlMinutes)
    // the turns POST /v1/turns starts run in a pipeline that lives as long as the server
    const limits = {
      maxTurns: yield* ServerLimits.positive("max-turns", args.maxTurns),
      maxLagMs: yield* ServerLimits.positive("max-lag-ms", args.maxLagMs)
    }
    // one shutdown budget for the process: the server's close waits at most all of it
    // for the answers in flight; the turns get half of it to end by themselves, then a
    // quarter to write their `aborted` endings (the rest is for the connections to close)
    const shutdownTimeoutMs = yield* ServerLimits.positive("shutdown-timeout-ms", args.shutdownTimeoutMs)
    const pipeline = yield* Layer.build(Publishing.pipelineLayer(args.prefix, limits, shutdownPlan(shutdownTimeoutMs)))
    const starter = yield* TurnStarts.make.pipe(Effect.provide(pipeline), Effect.provide(ProviderHttp.layer))
    // threads on the same store and prefix, their turns on the same pipeline and clients
    const clientFor = yield* TurnStarts.clients.pipe(Effect.provide(ProviderHttp.layer))
    const threads = yield* ThreadOptions.services(args.prefix, yield* ThreadOptions.policy(args), clientFor).pipe(
      Effect.provide(pipeline)
    )
    const running = yield* Serving.start({
      port: args.port,
      prefix: args.prefix,
      insecureLocal: args.insecureLocal,
      ...(yield* Serving.serverOptions(args)),
      ...(yield* ServerLimits.serverOptions(args)),
      ...(yield* ThreadOptions.serverOptions(args)),
      shutdownTimeoutMs,
      ...Option.match(args.host, { onNone: () => ({}), onSome: (host) => ({ host }) })
    }).pipe(Effect.provideService(TurnStarter.TurnStarter, starter), Effect.provideContext(threads))
    const url = yield* running.pageUrl(ttl)
    yield* Output.line(
      args.insecureLocal
        ? `the turn viewer: ${url}`
        : `the turn viewer: ${url}\n  (a read-only link, valid for ${args.linkTtlMinutes} minutes; keep it to yourself)`
    )
    return yield* Effect.never
  }).pipe(
    Effect.scoped,
    Effect.provide(
      Layer.unwrap(Effect.map(
        ServerLimits.durableLimits(args),
        (limits) =>
          Layer.merge(
            Publishing.storeLayer(args.redisUrl),
            Publishing.durableStoreLayer(args.redisUrl, args.prefix, limits)
          )
      ))
    )
  )
