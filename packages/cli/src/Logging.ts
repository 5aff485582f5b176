/**
 * The command's log lines: every one on standard error, once, as `--log-format` says
 * (`pretty` for people, `json` for log shippers: one JSON object a line), styled only
 * when standard error shows styles.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Inspectable from "effect/Inspectable"
import * as Logger from "effect/Logger"
import type * as LogLevel from "effect/LogLevel"
import * as References from "effect/References"
import * as Schema from "effect/Schema"
import type * as Output from "./Output.js"

/**
 * How log lines are written.
 *
 * @since 0.1.0
 * @category models
 */
export const LogFormat = Schema.Literals(["pretty", "json"])

/**
 * @since 0.1.0
 * @category models
 */
export type LogFormat = typeof LogFormat.Type

/** A level as log lines name it: `WARN`, `INFO`, ... */
const labelOf = (level: LogLevel.LogLevel): string => level.toUpperCase()

const levelStyles: Partial<Record<string, string>> = {
  FATAL: "\x1b[1;31m",
  ERROR: "\x1b[31m",
  WARN: "\x1b[33m",
  INFO: "\x1b[32m",
  DEBUG: "\x1b[2m",
  TRACE: "\x1b[2m"
}

const messageText = (message: unknown): string =>
  (Array.isArray(message) ? message : [message]).map((
    part
  ) => (typeof part === "string" ? part : Inspectable.toStringUnknown(part, 0))).join(" ")

const annotationText = (value: unknown): string => {
  const text = typeof value === "string" ? value : Inspectable.toStringUnknown(value, 0)
  return /[\s"=]/.test(text) ? JSON.stringify(text) : text
}

/**
 * One log line for people: time, level, message, `key=value` annotations, the
 * cause's first line; the level coloured when `styled`.
 *
 * @since 0.1.0
 * @category loggers
 */
export const prettyLine = (styled: boolean): Logger.Logger<unknown, string> =>
  Logger.make(({ cause, date, fiber, logLevel, message }) => {
    const label = labelOf(logLevel)
    const level = label.padEnd(5)
    const parts = [
      date.toISOString().slice(11, 23),
      styled ? `${levelStyles[label] ?? ""}${level}\x1b[0m` : level,
      messageText(message)
    ]
    for (const [key, value] of Object.entries(fiber.getRef(References.CurrentLogAnnotations))) {
      parts.push(`${key}=${annotationText(value)}`)
    }
    if (cause.reasons.length > 0) parts.push(`cause=${annotationText(Cause.pretty(cause).split("\n")[0] ?? "")}`)
    return parts.join(" ")
  })

/**
 * One log line for log shippers: a JSON object with the `message`, the `logLevel`
 * (`WARN`, ...), the `timestamp`, the `cause` when there is one, the `annotations`,
 * the `spans` and the `fiberId` (the fields of Effect 3's JSON logger, which Effect 4
 * names differently).
 *
 * @since 0.2.0
 * @category loggers
 */
export const jsonLine: Logger.Logger<unknown, string> = Logger.map(
  Logger.formatStructured,
  ({ annotations, cause, fiberId, level, message, spans, timestamp }) =>
    JSON.stringify({
      message,
      logLevel: level,
      timestamp,
      ...(cause === undefined ? {} : { cause }),
      annotations,
      spans,
      fiberId
    })
)

/**
 * The logger writing every log line to standard error in `format`.
 *
 * @since 0.1.0
 * @category loggers
 */
export const logger = (format: LogFormat, output: Output.Service): Logger.Logger<unknown, void> =>
  Logger.map(format === "json" ? jsonLine : prettyLine(output.stderrStyled), output.log)

/**
 * Runs `effect` with exactly this logger: Effect's default logger, and the pretty one a
 * runtime's `runMain` puts in its place, are gone, so no line is written twice or to
 * standard output.
 *
 * @since 0.1.0
 * @category loggers
 */
export const withLogger =
  (format: LogFormat, output: Output.Service) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.provideService(effect, References.CurrentLoggers, new Set([logger(format, output), Logger.tracerLogger]))
