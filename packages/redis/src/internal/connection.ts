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

const attempt = (url: string, settings: Settings): Effect.Effect<Redis, RedisError> => {
  let cause: unknown = undefined
  return Effect.tryPromise({
    try: async (signal) => {
      cause = undefined
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
      // client from reporting them on its own. While connecting it keeps the cause:
      // ioredis rejects `connect()` with "Connection is closed." whatever closed it
      // (refused, unknown host, NOAUTH, a wrong password, protected mode), and says
      // why only through this event.
      const onError = (error: unknown) => {
        cause = error
      }
      client.on("error", onError)
      // An attempt given up (the timeout below) drops its connection.
      signal.addEventListener("abort", () => client.disconnect())
      try {
        await client.connect()
      } catch (error) {
        client.disconnect()
        throw error
      } finally {
        client.off("error", onError)
        client.on("error", () => {})
      }
      return client
    },
    catch: (error) => connectError(cause ?? error)
  })
}

const hints: ReadonlyArray<readonly [RegExp, string]> = [
  [/^NOAUTH\b/, "the server requires a password: give it in the URL, redis://:<password>@host:port"],
  [/^WRONGPASS\b|invalid password/i, "the password (or user name) in the URL is wrong"],
  [/^DENIED\b/, "the server runs in protected mode: give it a password, or bind it to the address you connect from"],
  [/ENOTFOUND|EAI_AGAIN/, "the host name does not resolve"],
  [/ECONNREFUSED/, "nothing listens at that host and port"]
]

/**
 * The `RedisError` of a connection that could not be opened, naming its cause (and
 * what to check) rather than the closed connection it left.
 *
 * @internal
 */
export const connectError = (cause: unknown): RedisError => {
  const error = toRedisError("CONNECT", undefined, cause)
  const hint = hints.find(([pattern]) => pattern.test(error.detail))
  return hint === undefined
    ? error
    : new RedisError({ reason: error.reason, command: "CONNECT", detail: `${error.detail} (${hint[1]})`, cause })
}

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
