/**
 * `@sluice/client/effect`: following a turn as an Effect `Stream` of its states, for
 * apps on Effect (the main entry carries no Effect runtime; this one does).
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Random from "effect/Random"
import * as Stream from "effect/Stream"
import { type FollowOptions, followTurn } from "./TurnFollower.js"
import type * as TurnState from "./TurnState.js"

/**
 * The states of the turn `turnId` as `followTurn` makes them, from the first to the
 * last (`connection` `finished`, `failed` or `closed`), then the end of the stream.
 * Interrupting the stream stops following. The waits between reconnects, and the
 * bound of `awaitTurnMs`, run on Effect's `Clock` and their jitter on its `Random` (so
 * `TestClock` drives them), unless `options` give their own.
 *
 * @since 0.1.0
 * @category streams
 */
export const states = (
  baseUrl: string,
  turnId: string,
  options: Omit<FollowOptions, "signal"> = {}
): Stream.Stream<TurnState.TurnState> =>
  Stream.callback<TurnState.TurnState>((queue) =>
    Effect.acquireRelease(
      Effect.flatMap(Effect.context<never>(), (context) =>
        Effect.sync(() => {
          const runPromise = Effect.runPromiseWith(context)
          const runSync = Effect.runSyncWith(context)
          const handle = followTurn(baseUrl, turnId, {
            ...options,
            sleep: options.sleep ??
              ((ms, signal) => runPromise(Effect.sleep(ms), { signal }).catch(() => undefined)),
            random: options.random ?? (() => runSync(Random.next)),
            now: options.now ?? (() => runSync(Clock.currentTimeMillis))
          })
          Queue.offerUnsafe(queue, handle.getSnapshot())
          const unsubscribe = handle.subscribe(() => Queue.offerUnsafe(queue, handle.getSnapshot()))
          void handle.done.then(() => Queue.endUnsafe(queue))
          return { handle, unsubscribe }
        })),
      ({ handle, unsubscribe }) =>
        Effect.sync(() => {
          unsubscribe()
          handle.close()
        })
    )
  )
