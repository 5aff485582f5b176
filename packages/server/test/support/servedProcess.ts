/**
 * The turn server in a process of its own, for tests that measure it from outside (its
 * memory in /proc, its CPU) or need it apart from the test's process: `TurnServer.layer`
 * on a redis-server, with the test tokens, on 127.0.0.1 and a free port, and the options
 * given as JSON. It writes `listening <port>` on stdout once it serves; its INFO log
 * lines are left out.
 *
 *   tsx servedProcess.ts <redisUrl> <prefix> [optionsJson]
 */
import { RedisStreamsLive } from "@sluice/redis"
import { quietLogs, tokens } from "@sluice/testing/server"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as TurnServer from "../../src/TurnServer.js"
import * as TurnServerOptions from "../../src/TurnServerOptions.js"

const [url, prefix, json] = process.argv.slice(2)
if (url === undefined || prefix === undefined) {
  process.stderr.write("usage: servedProcess.ts <redisUrl> <prefix> [optionsJson]\n")
  process.exit(2)
}
const options = Schema.decodeUnknownSync(Schema.toEncoded(TurnServerOptions.TurnServerOptions))(
  JSON.parse(json ?? "{}")
)

const program = Effect.gen(function*() {
  const context = yield* quietLogs(
    Layer.build(TurnServer.layer({ port: 0, host: "127.0.0.1", prefix, tokens: [...tokens], ...options }))
  )
  const address = yield* Effect.provide(TurnServer.address, context)
  if (address._tag === "UnixPathAddress") return yield* Effect.die(new Error("expected a TCP address"))
  process.stdout.write(`listening ${address.port}\n`)
  return yield* Effect.never
})

Effect.runPromise(program.pipe(Effect.scoped, Effect.provide(RedisStreamsLive.layer({ url })))).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`server failed: ${String(error)}\n`)
    process.exit(1)
  }
)
