/**
 * The command's terminal output: the only module that writes to stdout and stderr.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * Where the command writes. Swapped for a buffer in tests.
 *
 * @since 0.1.0
 * @category services
 */
export class Output extends Context.Service<
  Output,
  {
    /** Writes text to standard output, waiting while the pipe is full. */
    readonly stdout: (text: string) => Effect.Effect<void>
    /** Writes text to standard error. */
    readonly stderr: (text: string) => Effect.Effect<void>
    /** Writes one log line (a newline is added) to standard error at once, as loggers must. */
    readonly log: (line: string) => void
    /** Whether standard output shows ANSI styles: a terminal, and `NO_COLOR` unset. */
    readonly isTTY: boolean
    /** Whether standard error shows ANSI styles: a terminal, and `NO_COLOR` unset. */
    readonly stderrStyled: boolean
    /**
     * How many columns standard output has when it is a terminal (none when it is not):
     * the help is wrapped to it when narrower than 100 columns (since 0.3.0).
     */
    readonly columns?: number | undefined
  }
>()("@sluice/cli/Output") {}

/**
 * What the `Output` service offers.
 *
 * @since 0.1.0
 * @category services
 */
export type Service = Context.Service.Shape<typeof Output>

/**
 * A writer for a process stream. Once the reader has gone (EPIPE, as with `| head`),
 * writing interrupts the command, which then exits quietly with code 0.
 */
const writer = (stream: NodeJS.WriteStream) => {
  let closed = false
  stream.on("error", () => {
    closed = true
  })
  return (text: string): Effect.Effect<void> =>
    closed
      ? Effect.interrupt
      : Effect.callback<void>((resume) => {
        if (stream.write(text)) return resume(Effect.void)
        const onDrain = () => {
          stream.off("error", onError)
          resume(Effect.void)
        }
        const onError = () => {
          stream.off("drain", onDrain)
          resume(Effect.interrupt)
        }
        stream.once("drain", onDrain)
        stream.once("error", onError)
      })
}

/**
 * Whether a process stream shows ANSI styles: it is a terminal and `NO_COLOR` is not
 * set to a non-empty value (https://no-color.org).
 *
 * @since 0.1.0
 * @category terminal
 */
export const styled = (
  stream: { readonly isTTY?: boolean | undefined },
  env: NodeJS.ProcessEnv = process.env
): boolean => stream.isTTY === true && (env["NO_COLOR"] ?? "") === ""

/**
 * Writes to the process's standard output and error.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Output> = Layer.sync(Output, () => ({
  stdout: writer(process.stdout),
  stderr: writer(process.stderr),
  log: (line) => void process.stderr.write(line + "\n"),
  isTTY: styled(process.stdout),
  stderrStyled: styled(process.stderr),
  columns: process.stdout.isTTY === true ? process.stdout.columns : undefined
}))

/**
 * Collects what the command writes, for tests; `isTTY` and `stderrStyled` say
 * whether standard output and error pose as styled terminals (default not), `columns`
 * the width standard output poses as having (default none, as for a pipe).
 *
 * @since 0.1.0
 * @category layers
 */
export const memory = (
  options: {
    readonly isTTY?: boolean | undefined
    readonly stderrStyled?: boolean | undefined
    readonly columns?: number | undefined
  } = {}
): { readonly layer: Layer.Layer<Output>; readonly stdout: () => string; readonly stderr: () => string } => {
  let out = ""
  let err = ""
  return {
    layer: Layer.succeed(Output, {
      stdout: (text) => Effect.sync(() => void (out += text)),
      stderr: (text) => Effect.sync(() => void (err += text)),
      log: (line) => void (err += line + "\n"),
      isTTY: options.isTTY ?? false,
      stderrStyled: options.stderrStyled ?? false,
      columns: options.columns
    }),
    stdout: () => out,
    stderr: () => err
  }
}

/**
 * Writes one line to standard output.
 *
 * @since 0.1.0
 * @category writing
 */
export const line = (text: string): Effect.Effect<void, never, Output> =>
  Output.use((output) => output.stdout(text + "\n"))

/**
 * Writes one line to standard error.
 *
 * @since 0.1.0
 * @category writing
 */
export const errorLine = (text: string): Effect.Effect<void, never, Output> =>
  Output.use((output) => output.stderr(text + "\n"))

/**
 * Writes text to standard output as it is, without a newline.
 *
 * @since 0.1.0
 * @category writing
 */
export const text = (text: string): Effect.Effect<void, never, Output> => Output.use((output) => output.stdout(text))
