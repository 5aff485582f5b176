/**
 * The operator's routes: liveness, readiness and the metrics. None of them holds turn
 * data.
 *
 * @internal
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { RedisStreams, TurnKeys } from "@sluice/redis"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Prometheus from "../Prometheus.js"

const noStore = { "cache-control": "no-store" } as const

/**
 * `GET /healthz`: the process is alive and serving, 200 `{"status":"ok"}`.
 *
 * @internal
 */
export const healthz: Effect.Effect<HttpServerResponse.HttpServerResponse> = Effect.succeed(
  HttpServerResponse.unsafeJson({ status: "ok" }, { headers: noStore })
)

/**
 * `GET /readyz`: Redis answered a command (`PTTL` of the prefix's turn index, which
 * reads nothing of a turn) within `timeoutMs`: 200 `{"status":"ready"}`, else 503
 * `{"status":"unavailable","reason":...}`; the failure is logged as a warning.
 *
 * @internal
 */
export const readyz = (prefix: string, timeoutMs: number) =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams.RedisStreams
    // requests are handled uninterruptibly: the command is made interruptible, so
    // that the deadline can abandon it
    const answered = yield* Effect.interruptible(redis.pttl(TurnKeys.turnsKey(prefix))).pipe(
      Effect.timeoutFail({
        duration: Duration.millis(timeoutMs),
        onTimeout: () => `Redis did not answer within ${timeoutMs} ms`
      }),
      Effect.mapError((error) => typeof error === "string" ? error : `Redis failed: ${error.reason}`),
      Effect.either
    )
    if (answered._tag === "Right") return HttpServerResponse.unsafeJson({ status: "ready" }, { headers: noStore })
    yield* Effect.logWarning(`not ready: ${answered.left}`)
    return HttpServerResponse.unsafeJson({ status: "unavailable", reason: answered.left }, {
      status: 503,
      headers: noStore
    })
  })

/**
 * `GET /metrics`: every metric of the process as Prometheus text.
 *
 * @internal
 */
export const metrics: Effect.Effect<HttpServerResponse.HttpServerResponse> = Effect.map(
  Prometheus.text,
  (body) => HttpServerResponse.text(body, { contentType: Prometheus.contentType, headers: noStore })
)
