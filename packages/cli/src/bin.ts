#!/usr/bin/env node
/**
 * The `sluice` executable.
 *
 * @since 0.1.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Cli from "./Cli.js"
import * as Tracing from "./internal/tracing.js"
import * as Output from "./Output.js"

const program = Cli.run(process.argv).pipe(
  // a defect is a bug in Sluice, not bad input: report it plainly, without the fiber dump
  Effect.catchDefect((defect) =>
    Output.errorLine(`sluice: internal error: ${defect instanceof Error ? defect.message : String(defect)}`).pipe(
      Effect.andThen(Effect.die(defect))
    )
  ),
  Effect.provide(Layer.merge(NodeServices.layer, Output.layer)),
  // outermost, so that the spans of the command are flushed before the process exits
  Effect.provide(Tracing.layerConfig)
)

// SIGINT and SIGTERM interrupt the program (runMain's own handlers); a turn in flight
// then ends `aborted` in both streams before the process exits 128 + the signal's number.
let signalled: "SIGINT" | "SIGTERM" | undefined
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => void (signalled ??= signal))

NodeRuntime.runMain(program, {
  // the command reports its failures itself, and installs its own logger (standard
  // error, --log-format)
  disableErrorReporting: true,
  teardown: (exit, onExit) =>
    onExit(
      Exit.isFailure(exit) && Cause.hasDies(exit.cause)
        ? 70
        : signalled !== undefined && Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)
        ? Cli.signalExitCode(signalled)
        : Cli.exitCode(exit)
    )
})
