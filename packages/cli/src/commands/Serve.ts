/**
 * `sluice serve [--port N]`: the HTTP API over Redis Streams (`--redis-url`) or the
 * embedded in-memory store, with bearer tokens from `SLUICE_API_TOKENS`, and the turn
 * viewer page at `/`, whose signed link it prints.
 *
 * @since 0.1.0
 */
import { Command, Options } from "@effect/cli"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as EnvOptions from "../EnvOptions.js"
import * as Output from "../Output.js"
import * as Serving from "../Serving.js"
import * as Publishing from "../Publishing.js"

/**
 * The `serve` command. Runs until interrupted (Ctrl-C).
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "serve",
  {
    port: EnvOptions.integer("port", "SLUICE_PORT", 8787, "the port to listen on"),
    host: EnvOptions.optionalText("host", "SLUICE_HOST", "the address to bind: all addresses by default, loopback with --insecure-local"),
    insecureLocal: Options.boolean("insecure-local").pipe(
      Options.withDescription("serve without tokens, on loopback only (for local development)")
    ),
    prefix: Publishing.prefixOption,
    linkTtlMinutes: Serving.linkTtlOption,
    redisUrl: EnvOptions.redisUrl
  },
  (args) =>
    Effect.gen(function* () {
      const ttl = yield* Serving.linkTtl(args.linkTtlMinutes)
      const running = yield* Serving.start({
        port: args.port,
        prefix: args.prefix,
        insecureLocal: args.insecureLocal,
        ...Option.match(args.host, { onNone: () => ({}), onSome: (host) => ({ host }) })
      })
      const url = yield* running.pageUrl(ttl)
      yield* Output.line(
        args.insecureLocal
          ? `the turn viewer: ${url}`
          : `the turn viewer: ${url}\n  (a read-only link, valid for ${args.linkTtlMinutes} minutes; keep it to yourself)`
      )
      return yield* Effect.never
    }).pipe(Effect.scoped, Effect.provide(Publishing.storeLayer(args.redisUrl)))
).pipe(Command.withDescription("serve the turn API (SSE per turn with resume, snapshots) and the turn viewer page"))
