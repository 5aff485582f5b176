/**
 * Test output without the server's INFO lines (the access log of every request, the
 * address it serves on): the default logger passes on warnings and errors only. A
 * logger a test installs itself (to read the access log) still gets every line.
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as HashSet from "effect/HashSet"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"

const warningsOnly = Logger.filterLogLevel(Logger.defaultLogger, LogLevel.greaterThanEqual(LogLevel.Warning))

/**
 * Runs `effect` (the build of a server: the fibers it forks keep the setting) with the
 * default logger at Warning.
 */
export const quietLogs = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.locallyWith(
    effect,
    FiberRef.currentLoggers,
    HashSet.map((logger) => (logger === Logger.defaultLogger ? warningsOnly : logger))
  )
