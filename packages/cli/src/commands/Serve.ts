/**
 * `sluice serve [--port N]`: the HTTP API over Redis Streams (`REDIS_URL`) or the
 * embedded in-memory store, with bearer tokens from `SLUICE_API_TOKENS`, and the turn
 * viewer page at `/`, whose signed link it prints.
 *
 * @since 0.1.0
 */
import { Command, Options } from "@effect/cli"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
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
    port: Options.integer("port").pipe(Options.withDescription("the port to listen on"), Options.withDefault(8787)),
    host: Options.text("host").pipe(Options.withDescription("the address to bind (default: all; loopback with --insecure-local)"), Options.optional),
    insecureLocal: Options.boolean("insecure-local").pipe(
      Options.withDescription("serve without tokens, on loopback only (for local development)")
    ),
    prefix: Options.text("prefix").pipe(Options.withDescription("the Redis key prefix"), Options.withDefault("codex")),
    linkTtlMinutes: Serving.linkTtlOption
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
    }).pipe(Effect.scoped, Effect.provide(Publishing.storeLayer))
).pipe(Command.withDescription("serve the turn API (SSE per turn with resume, snapshots) and the turn viewer page"))
