/**
 * Following a turn: its snapshot, then its live feed (`GET /v1/turns/:turnId/upserts`,
 * read with `fetch` as a stream), resumed with `Last-Event-ID` after the last entry
 * applied whenever the feed drops, with exponential backoff and full jitter between
 * attempts. A turn not written yet may be waited for (`awaitTurnMs`). The state is a store: `getSnapshot()` returns the same object until
 * something changes, `subscribe(listener)` tells each change, the pair that React's
 * `useSyncExternalStore` takes.
 *
 * @since 0.1.0
 */
import { ClientError, fromThrown } from "./ClientError.js"
import { readEvents, readJson, type RequestOptions, send, turnUrl } from "./internal/http.js"
import { platformSleep } from "./internal/sleep.js"
import * as Reconnect from "./Reconnect.js"
import * as TurnState from "./TurnState.js"
import { isSnapshot, isTurnEvent, isUpsert, type Snapshot } from "./Wire.js"

/**
 * How to follow a turn.
 *
 * - `token`: a bearer token (sent as `Authorization: Bearer`);
 * - `accessToken`: a signed page token (sent as `?access_token=`, where the server
 *   takes page tokens);
 * - `fetch`: the `fetch` to use (the global one by default);
 * - `signal`: stops following when aborted (as `close()` does);
 * - `reconnect`: the backoff between attempts (`Reconnect.defaults`);
 * - `awaitTurnMs` (0): how long a turn that the server does not know yet (404
 *   `turn_not_found`) is waited for, from the call, before following fails, for an
 *   app that follows a turn as it starts it: the feed is opened from the turn's start
 *   (a server with `awaitTurnMs` holds it until the turn is written), and looked for
 *   again every 250 ms (`awaitPollMs`) while the server answers 404 at once. Once the
 *   turn has been seen, a 404 stops following at once, as it always did;
 * - `random`, `sleep`: the jitter's source and the wait (tests give their own; the
 *   default wait is the platform's timer);
 * - `now`: the time in milliseconds that bounds `awaitTurnMs` (`Date.now` by
 *   default; tests give their own).
 *
 * @since 0.1.0
 * @category models
 */
export interface FollowOptions extends RequestOptions {
  readonly reconnect?: Reconnect.ReconnectOptions | undefined
  readonly awaitTurnMs?: number | undefined
  readonly random?: (() => number) | undefined
  readonly sleep?: ((ms: number, signal: AbortSignal) => Promise<void>) | undefined
  readonly now?: (() => number) | undefined
}

/**
 * How often a turn not written yet is looked for again, while the server answers
 * `turn_not_found` at once (`awaitTurnMs`): 250 ms.
 *
 * @since 0.3.0
 * @category constants
 */
export const awaitPollMs = 250

/**
 * A followed turn.
 *
 * - `getSnapshot()`: the current `TurnState` (a stable reference between changes);
 * - `subscribe(listener)`: calls `listener` after each change; returns the
 *   unsubscribe function;
 * - `done`: settles once following stops, with the last state (`connection`
 *   `finished`, `failed` or `closed`); it never rejects;
 * - `close()`: stops following.
 *
 * @since 0.1.0
 * @category models
 */
export interface TurnHandle {
  readonly getSnapshot: () => TurnState.TurnState
  readonly subscribe: (listener: () => void) => () => void
  readonly done: Promise<TurnState.TurnState>
  readonly close: () => void
}

const parseData = (data: string, what: string): unknown => {
  try {
    return JSON.parse(data)
  } catch {
    throw new ClientError("unexpected_body", `a ${what} event's data is not JSON`)
  }
}

/**
 * Follows the turn `turnId` on the server at `baseUrl` (`http://host:port`, with or
 * without a trailing slash): loads its snapshot, then, while it runs, its live feed,
 * until the turn's last entry (`turn_completed`; a failed turn's `turn_error` comes
 * before it, and following goes on to it and its usage: `TurnState.isEnded`).
 * A dropped feed, a network failure, a 5xx, 408, 429 or `stream_error` is retried after
 * `Reconnect.delayMs`, resuming after the last entry applied, so every entry is
 * applied once; any other answer (401, 403, 404, a body that is not the API's) stops
 * following with `connection: "failed"` and the error in `lastError`. With
 * `options.awaitTurnMs`, a turn not written yet (404 `turn_not_found` before any of it
 * was read) is waited for that long, from this call: its feed is opened from its
 * start, and while the server answers 404 at once, tried again every `awaitPollMs`
 * (the connection stays `loading`); past the bound, 404 stops following as before.
 *
 * @since 0.1.0
 * @category constructors
 */
export const followTurn = (baseUrl: string, turnId: string, options: FollowOptions = {}): TurnHandle => {
  const controller = new AbortController()
  const signal = controller.signal
  const stop = () => controller.abort()
  options.signal?.addEventListener("abort", stop, { once: true })
  if (options.signal?.aborted === true) stop()
  const request: RequestOptions = {
    token: options.token,
    accessToken: options.accessToken,
    fetch: options.fetch,
    signal
  }
  const sleep = options.sleep ?? platformSleep
  const now = options.now ?? Date.now
  const awaitTurnMs = Math.max(0, options.awaitTurnMs ?? 0)
  const awaitUntil = awaitTurnMs > 0 ? now() + awaitTurnMs : -Infinity
  const maxAttempts = options.reconnect?.maxAttempts ?? Reconnect.defaults.maxAttempts
  const listeners = new Set<() => void>()
  let state = TurnState.initial(turnId)

  const set = (next: TurnState.TurnState) => {
    if (next === state) return
    state = next
    for (const listener of [...listeners]) listener()
  }

  // Whether `error` says the turn is not written yet, and it is still waited for:
  // nothing of it read, within `awaitTurnMs` of the call.
  const awaitingTurn = (error: ClientError): boolean =>
    error.code === "turn_not_found" && state.lastEventId === undefined && now() < awaitUntil

  // The turn's snapshot; none for a turn not written yet that is waited for (its feed
  // is then read from its start).
  const loadSnapshot = async (): Promise<Snapshot | undefined> => {
    try {
      const response = await send(turnUrl(baseUrl, turnId), request)
      return await readJson(response, isSnapshot, "a turn snapshot")
    } catch (thrown) {
      if (thrown instanceof ClientError && awaitingTurn(thrown)) return undefined
      throw thrown
    }
  }

  // One attempt: the snapshot when none is loaded yet, then the feed until it closes.
  // True when an event was applied (the backoff starts over).
  const attempt = async (): Promise<boolean> => {
    let progressed = false
    let applied = 0
    if (state.lastEventId === undefined) {
      const snapshot = await loadSnapshot()
      if (snapshot !== undefined) {
        set(TurnState.fromSnapshot(state, snapshot))
        progressed = true
        if (TurnState.isEnded(state)) return progressed
      }
    }
    const after = state.lastEventId ?? "0-0"
    const response = await send(turnUrl(baseUrl, turnId, "/upserts"), request, {
      headers: { accept: "text/event-stream", "last-event-id": after }
    })
    set(TurnState.withConnection(state, "live"))
    await readEvents(response, (event) => {
      if (event.event === "stream_error") {
        throw new ClientError("stream_error", `the server lost the turn's stream: ${event.data}`)
      }
      if (event.id === undefined) return
      if (event.event === "item_upsert") {
        const upsert = parseData(event.data, "item_upsert")
        if (!isUpsert(upsert)) throw new ClientError("unexpected_body", `entry ${event.id} is not an item upsert`)
        set(TurnState.applyUpsert(state, event.id, upsert))
      } else if (event.event === "turn_event") {
        const turnEvent = parseData(event.data, "turn_event")
        if (!isTurnEvent(turnEvent)) throw new ClientError("unexpected_body", `entry ${event.id} is not a turn event`)
        set(TurnState.applyTurnEvent(state, event.id, turnEvent))
      }
      progressed = true
      applied++
    })
    // A failed turn's snapshot may stop at its `turn_error`; the server closes the feed
    // at once, with no entry, only for a reader that has the turn's last entry.
    if (applied === 0 && state.status === "error" && !TurnState.isEnded(state)) set(TurnState.ended(state))
    return progressed
  }

  const run = async (): Promise<TurnState.TurnState> => {
    let failures = 0
    while (!signal.aborted) {
      try {
        if (await attempt()) failures = 0
        if (TurnState.isEnded(state)) {
          set(TurnState.withConnection(state, "finished"))
          return state
        }
        // the server closed the feed without ending the turn (it is shutting down, or
        // the feed was idle too long): open it again
        if (signal.aborted) break
        set(TurnState.withConnection(state, "reconnecting"))
      } catch (thrown) {
        if (signal.aborted) break
        const error = fromThrown(thrown)
        if (awaitingTurn(error)) {
          // the server answered at once: look again shortly, within the bound
          await sleep(Math.max(0, Math.min(awaitPollMs, awaitUntil - now())), signal)
          continue
        }
        if (!error.retryable) {
          set(TurnState.withConnection(state, "failed", error))
          return state
        }
        set(TurnState.withConnection(state, "reconnecting", error))
      }
      if (failures >= maxAttempts) {
        const error = new ClientError("gave_up", `the turn's feed failed ${failures} times in a row`)
        set(TurnState.withConnection(state, "failed", error))
        return state
      }
      await sleep(Reconnect.delayMs(failures, options.reconnect, options.random), signal)
      failures++
    }
    set(TurnState.withConnection(state, "closed"))
    return state
  }

  return {
    getSnapshot: () => state,
    subscribe: (listener) => {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    done: run().finally(() => options.signal?.removeEventListener("abort", stop)),
    close: stop
  }
}
