/**
 * What starts the turns of threads for `POST /v1/threads/:threadId/turns`
 * (docs/threads.md#http). The server keeps the thread (`Threads` of `@sluice/turns`):
 * it decodes what the client sent, begins the turn in the thread, and hands the
 * starter the provider messages of the turn (`messages`: the thread's history, then
 * the new input) with the turn's ids; the starter sends them to a provider and runs the
 * pipeline under those ids. What a client may choose (the model, the provider, the
 * tools by name) is decided here, by the application: `check` refuses what it does not
 * allow before the turn is begun, and fills in its defaults. Provider keys and base URLs
 * are the starter's own; a client never sends them.
 *
 * `sluice serve` provides one on its pipeline and the providers' live clients
 * (`--thread-provider`, `--thread-model`, `--thread-models`); without one, the thread
 * routes that start turns answer 501 `not_implemented`.
 *
 * @since 0.3.0
 */
import type { StreamEvent } from "@sluice/core"
import type { ThreadLog, Threads } from "@sluice/turns"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import type { ApiError } from "./ApiError.js"

/**
 * What a client asked for, besides its input: each absent to take the server's default.
 *
 * @since 0.3.0
 * @category models
 */
export interface ThreadChoice {
  readonly model?: string | undefined
  readonly provider?: string | undefined
  readonly tools?: ReadonlyArray<string> | undefined
}

/**
 * What the starter runs: the thread's begun turn (its ids and the provider messages of
 * its request) and the choice as `check` resolved it.
 *
 * @since 0.3.0
 * @category models
 */
export interface ThreadTurn {
  readonly threadId: string
  readonly turnId: string
  readonly prefix: string
  readonly messages: Threads.BegunTurn["messages"]
  readonly choice: ThreadChoice
}

/**
 * A started turn of a thread: its events for the answer, and its end once it ended,
 * whatever the ending (completed, cancelled, failed, its producer lost, aborted when the
 * process shut down): the final items the thread records (`Turn.finalItems`).
 * `ended` never fails: a failure is an end of status `failed`.
 *
 * @since 0.3.0
 * @category models
 */
export interface StartedThreadTurn {
  readonly turnId: string
  readonly events: Stream.Stream<StreamEvent.StreamEvent>
  readonly ended: Effect.Effect<ThreadLog.TurnEnd>
}

/**
 * Starts the turns of threads.
 *
 * @since 0.3.0
 * @category models
 */
export interface ThreadStarterService {
  /**
   * Checks a client's choice against what the server allows, and resolves its
   * defaults: `invalid_request` (400, naming the field: `model`, `provider`, `tools`)
   * for what it does not allow.
   */
  readonly check: (choice: ThreadChoice) => Effect.Effect<ThreadChoice, ApiError>
  /**
   * Starts the turn; returns once the turn is in Redis, as `TurnStarter.start` does
   * (and fails as it does: `provider_unavailable`, `at_capacity`, `redis_unavailable`).
   * A turn that was not started is ended `failed` by the server.
   */
  readonly start: (turn: ThreadTurn) => Effect.Effect<StartedThreadTurn, ApiError>
}

/**
 * The starter of the turns of threads.
 *
 * @since 0.3.0
 * @category services
 */
export class ThreadStarter
  extends Context.Service<ThreadStarter, ThreadStarterService>()("@sluice/server/ThreadStarter")
{}
