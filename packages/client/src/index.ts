/**
 * `@sluice/client`: a small client for apps that read Sluice turns, in browsers and
 * Node. `followTurn` gives a turn's state from its snapshot and then its live feed,
 * resuming by `Last-Event-ID` and reconnecting with backoff and jitter; `cancel` stops
 * a running turn; `listTurns` lists the recent ones. No runtime dependency but
 * `eventsource-parser`; the wire types come from `@sluice/core`'s schemas by type-only
 * imports.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
export { cancel } from "./Cancel.js"

/**
 * @since 0.1.0
 */
export { ClientError, type ClientErrorCode } from "./ClientError.js"

/**
 * @since 0.3.0
 */
export { listTurns, type ListTurnsOptions } from "./ListTurns.js"

/**
 * @since 0.1.0
 */
export * as Reconnect from "./Reconnect.js"

/**
 * @since 0.1.0
 */
export { type FollowOptions, followTurn, type TurnHandle } from "./TurnFollower.js"

/**
 * How often `followTurn` looks again for a turn not written yet (`awaitTurnMs`).
 *
 * @since 0.3.0
 */
export { awaitPollMs } from "./TurnFollower.js"

/**
 * @since 0.1.0
 */
export * as TurnState from "./TurnState.js"

/**
 * @since 0.1.0
 */
export type { Connection } from "./TurnState.js"

/**
 * @since 0.1.0
 */
export type { Snapshot, TurnError, TurnEvent, TurnStatus, Upsert, Usage } from "./Wire.js"

/**
 * @since 0.3.0
 */
export type { TurnList, TurnListEntry } from "./Wire.js"

/**
 * The wire types and the checks that hold a parsed body to them (`isSnapshot`,
 * `isUpsert`, `isTurnEvent`, `isTurnList`).
 *
 * @since 0.3.0
 */
export * as Wire from "./Wire.js"
