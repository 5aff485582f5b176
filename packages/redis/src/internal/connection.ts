/**
 * Opening one ioredis connection that never queues or resends a command: while it is
 * down every command fails at once, and a command sent but not answered is never
 * sent again behind the caller's back, speaking RESP2. What each caller adds (TLS, Sentinel,
 * timeouts, pipelining, its connection name) comes in `settings`.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { Redis, type RedisOptions } from "ioredis"
import { RedisError } from "../RedisError.js"
import { toRedisError } from "./replies.js"

/**
 * What a caller adds to a connection: anything but the protocol, which is RESP2.
 *
 * @internal
 */
export type Settings = Omit<RedisOptions, "protocol" | "replyMapping">

const attempt = (url: string, settings: Settings): Effect.Effect<Redis, RedisError> =>
  Effect.tryPromise({
    try: async (signal) => {
      const options: RedisOptions & { readonly replyMapping?: "legacy" } = {
        lazyConnect: true,
        enableOfflineQueue: false,
        autoResendUnfulfilledCommands: false,
        maxRetriesPerRequest: 0,
        // RESP2, which the batch writer's own reader speaks (ioredis 6 asks for RESP3 by default)
        protocol: 2,
        ...settings
      }
      const client = new Redis(url, options)
      // Failures reach callers through their commands; the event only stops the
      // client from reporting them on its own.
      client.on("error", () => {})
      // An attempt given up (the timeout below) drops its connection.
      signal.addEventListener("abort", () => client.disconnect())
      try {
        await client.connect()
      } catch (error) {
        client.disconnect()
        throw error
      }
      return client
    },
    catch: (cause) => toRedisError("CONNECT", undefined, cause)
  })

/**
 * Connects to `url` with `settings` over the no-queue, no-resend defaults; a failure
 * to connect is a `RedisError` of the `CONNECT` command, and so, as `Unavailable`, is
 * no connection within `timeoutMs` when it is given (the attempt is then dropped,
 * although acquiring is otherwise not interruptible). The connection closes with the
 * scope.
 *
 * @internal
 */
export const connect = (
  url: string,
  settings: Settings,
  timeoutMs?: number
): Effect.Effect<Redis, RedisError, Scope.Scope> =>
  Effect.acquireRelease(
    timeoutMs === undefined ? attempt(url, settings) : attempt(url, settings).pipe(
      Effect.interruptible,
      Effect.timeoutOrElse({
        duration: timeoutMs,
        orElse: () =>
          Effect.fail(
            new RedisError({
              reason: "Unavailable",
              command: "CONNECT",
              detail: `no connection within ${timeoutMs} ms`
            })
          )
      })
    ),
    (client) => Effect.sync(() => client.disconnect())
  )
