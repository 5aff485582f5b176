/**
 * What starts a turn for `POST /v1/turns`: given the request's JSON body, it checks
 * it, starts the turn (the provider request, the pipeline persisting both streams) and
 * gives back the turn's id and its StreamEvents as Stream A confirms them. The server
 * holds no provider client or pipeline of its own: an application provides a
 * `TurnStarter` (`sluice serve` does, on `TurnPipeline.start` and the providers' live
 * clients); without one, `POST /v1/turns` answers 501 `not_implemented`.
 *
 * A turn exists from the moment its id is given out: `start` returns once the turn is
 * in Redis (its first entry in both streams, its place in the index), before the
 * provider is asked, so that it can be followed, listed and cancelled at once; a turn
 * that cannot be written is `redis_unavailable` (503), answered before any header.
 * A starter may also cancel the turns it runs itself (`cancel`, which the cancel route
 * asks first, needing no Redis) and end them when the server shuts down (`shutdown`).
 *
 * @since 0.3.0
 */
import type { StreamEvent } from "@sluice/core"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import type { ApiError } from "./ApiError.js"

/**
 * A started turn: its id and its events, for one reader.
 *
 * @since 0.3.0
 * @category models
 */
export interface StartedTurn {
  readonly turnId: string
  readonly events: Stream.Stream<StreamEvent.StreamEvent>
}

/**
 * Starts turns. A body that is not a turn request fails with `invalid_request` (400,
 * naming what is wrong); a provider that cannot be asked (no API key) with
 * `provider_unavailable` (503); a turn the process will not take now (its pipeline's
 * `maxTurns` or `maxLagMs`, or it shuts down) with `at_capacity` (503, `Retry-After:
 * 1`); a turn that cannot be written to Redis with `redis_unavailable` (503).
 *
 * @since 0.3.0
 * @category models
 */
export interface TurnStarterService {
  /**
   * Starts a turn; returns once the turn is in Redis (see the module's description).
   * Its events end with the turn's last event; when they end without it (Redis was
   * lost mid-turn), the server ends the answer itself with an error and `[DONE]`.
   */
  readonly start: (body: unknown) => Effect.Effect<StartedTurn, ApiError>
  /**
   * Cancels a turn this starter runs in this process (`true`), at once and without
   * Redis; `false` when it runs none of that id (the cancel route then asks Redis). A
   * starter without it is asked nothing.
   */
  readonly cancel?: ((turnId: string) => Effect.Effect<boolean>) | undefined
  /**
   * Ends the turns this starter runs, as the server shuts down: the server runs it as
   * soon as it stops taking requests, beside waiting for the answers in flight (whose
   * turns it ends), within its `shutdownTimeoutMs`.
   */
  readonly shutdown?: Effect.Effect<void> | undefined
  /**
   * Why a turn asked for now would be refused `at_capacity`, in words, or `undefined`
   * when it would be taken. While it gives a reason, `/readyz` answers 503 with it, so
   * that a load balancer sends new requests to another process. A starter without it
   * is taken as always ready.
   */
  readonly atCapacity?: Effect.Effect<string | undefined> | undefined
}

/**
 * The starter of the turns `POST /v1/turns` asks for.
 *
 * @since 0.3.0
 * @category services
 */
export class TurnStarter extends Context.Service<TurnStarter, TurnStarterService>()("@sluice/server/TurnStarter") {}
