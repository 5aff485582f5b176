/**
 * Test output without the server's INFO lines (the access log of every request, the
 * address it serves on): the default logger passes on warnings and errors only. A
 * logger a test installs itself (to read the access log) still gets every line.
 */
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"

const warningsOnly = Logger.make<unknown, void>((options) => {
  if (LogLevel.isGreaterThanOrEqualTo(options.logLevel, "Warn")) Logger.defaultLogger.log(options)
})

/**
 * Runs `effect` (the build of a server: the fibers it forks keep the setting) with the
 * default logger at Warning.
 */
export const quietLogs = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.updateService(
    effect,
    Logger.CurrentLoggers,
    (loggers) => new Set([...loggers].map((logger) => (logger === Logger.defaultLogger ? warningsOnly : logger)))
  )
