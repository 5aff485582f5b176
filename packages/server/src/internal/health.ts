/**
 * The operator's routes: liveness, readiness and the metrics. None of them holds turn
 * data.
 *
 * @internal
 */
import { RedisStreams } from "@sluice/redis"
import { TurnKeys } from "@sluice/turns"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Prometheus from "../Prometheus.js"
import type * as TurnStarter from "../TurnStarter.js"

const noStore = { "cache-control": "no-store" } as const

/**
 * `GET /healthz`: the process is alive and serving, 200 `{"status":"ok"}`.
 *
 * @internal
 */
export const healthz: Effect.Effect<HttpServerResponse.HttpServerResponse> = Effect.succeed(
  HttpServerResponse.jsonUnsafe({ status: "ok" }, { headers: noStore })
)

/**
 * `GET /readyz`: Redis answered a command (`PTTL` of the prefix's turn index, which
 * reads nothing of a turn) within `timeoutMs`, and the `TurnStarter`, if any, takes
 * turns now: 200 `{"status":"ready"}`, else 503 `{"status":"unavailable","reason":...}`.
 * Redis's failure is logged as a warning, a starter at capacity as information (a
 * state of a loaded process, not a fault).
 *
 * @internal
 */
export const readyz = (prefix: string, timeoutMs: number, starter: Option.Option<TurnStarter.TurnStarterService>) =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams.RedisStreams
    // requests are handled uninterruptibly: the command is made interruptible, so
    // that the deadline can abandon it
    const answered = yield* Effect.interruptible(redis.pttl(TurnKeys.turnsKey(prefix))).pipe(
      Effect.mapError((error) => `Redis failed: ${error.reason}`),
      Effect.timeoutOrElse({
        duration: Duration.millis(timeoutMs),
        orElse: () => Effect.fail(`Redis did not answer within ${timeoutMs} ms`)
      }),
      Effect.result
    )
    if (Result.isFailure(answered)) {
      yield* Effect.logWarning(`not ready: ${answered.failure}`)
      return unavailable(answered.failure)
    }
    const full = Option.isSome(starter) && starter.value.atCapacity !== undefined
      ? yield* starter.value.atCapacity
      : undefined
    if (full === undefined) return HttpServerResponse.jsonUnsafe({ status: "ready" }, { headers: noStore })
    const reason = `at capacity: ${full}`
    yield* Effect.logInfo(`not ready: ${reason}`)
    return unavailable(reason)
  })

const unavailable = (reason: string) =>
  HttpServerResponse.jsonUnsafe({ status: "unavailable", reason }, { status: 503, headers: noStore })

/**
 * `GET /metrics`: every metric of the process as Prometheus text.
 *
 * @internal
 */
export const metrics: Effect.Effect<HttpServerResponse.HttpServerResponse> = Effect.map(
  Prometheus.text,
  (body) => HttpServerResponse.text(body, { contentType: Prometheus.contentType, headers: noStore })
)
