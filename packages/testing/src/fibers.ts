import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"

/**
 * Counts the fibers started inside the effects it tracks that have not ended yet, as
 * Effect 3's `Supervisor.track` listed them (Effect 4 has no supervisors): `track`
 * installs a `Metric.FiberRuntimeMetrics` service, which every fiber forked inside
 * it inherits and reports its start and end to.
 *
 * @since 0.3.0
 */
export const trackFibers = Effect.sync(() => {
  let active = 0
  const metrics: Metric.FiberRuntimeMetricsService = {
    recordFiberStart: () => {
      active++
    },
    recordFiberEnd: () => {
      active--
    }
  }
  return {
    /** How many tracked fibers are alive. */
    active: Effect.sync(() => active),
    track: <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      Effect.provideService(effect, Metric.FiberRuntimeMetrics, metrics)
  }
})
