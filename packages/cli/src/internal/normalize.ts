/**
 * What `sluice normalize` runs, loaded only when a command reads a transcript: a
 * recorded provider response into StreamEvents or the turn summary.
 *
 * @internal
 */
import { Accumulator, Summary } from "@sluice/accumulator"
import type { StreamEvent } from "@sluice/core"
import { Json } from "@sluice/core"
import { type Normalizer, type ProviderName, Providers, TranscriptFormat } from "@sluice/providers"
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { type CliFailure, invalidInput } from "../CliFailure.js"
import type * as Normalize from "../commands/Normalize.js"
import * as Input from "../Input.js"
import * as Output from "../Output.js"

/**
 * Fails, exit code 1, when the file (not standard input, which is read once) looks
 * like another format than `--provider` reads, naming the format it looks like.
 */
export const checkFormat = (
  name: ProviderName.ProviderName,
  file: string
): Effect.Effect<void, CliFailure, FileSystem.FileSystem> =>
  file === "-"
    ? Effect.void
    : Input.bytes(file).pipe(
      Stream.decodeText(),
      Stream.runHead,
      Effect.flatMap((head) => {
        const detected = Option.flatMap(head, TranscriptFormat.detect)
        if (Option.isNone(detected) || detected.value === TranscriptFormat.ofProvider(name)) return Effect.void
        const looks = `${file} looks like ${TranscriptFormat.label(detected.value)}, not ${name}`
        return Effect.fail(
          invalidInput(
            detected.value === "ai-sdk"
              ? `${looks}: sluice reads the providers' wire formats`
              : `${looks}: pass --provider ${detected.value}`
          )
        )
      })
    )

/**
 * The events of a recorded response: SSE framed and normalized, or a non-streaming JSON
 * body decoded. Invalid input fails with exit code 1 and a message naming the line or
 * event, or the format the file looks like when that is not the provider's.
 */
export const events = (
  name: ProviderName.ProviderName,
  file: string,
  nonStreaming: boolean,
  options?: Normalizer.NormalizeOptions
): Stream.Stream<StreamEvent.StreamEvent, CliFailure, FileSystem.FileSystem> => {
  const wire = Providers.get(name)
  if (nonStreaming) {
    return Stream.unwrap(
      Effect.gen(function*() {
        yield* checkFormat(name, file)
        const text = yield* Input.text(file)
        const body = Json.parseOrUndefined(text)
        if (body === undefined) return yield* Effect.fail(invalidInput(`${file} is not a JSON document`))
        const decoded = yield* wire.normalizeResponse(body, options).pipe(
          Effect.mapError((error) => invalidInput(error.message))
        )
        return Stream.fromIterable(decoded)
      })
    )
  }
  const decoded = Input.sseBytes(file).pipe(
    wire.decodeSse(options),
    Stream.mapError((error) => (error._tag === "CliFailure" ? error : invalidInput(error.message)))
  )
  return Stream.unwrap(Effect.as(checkFormat(name, file), decoded))
}

/**
 * Runs `sluice normalize`: the summary of the recorded turn, or its events with
 * `--events`, one JSON object a line.
 */
export const normalize = (
  args: Normalize.Args
): Effect.Effect<void, CliFailure, FileSystem.FileSystem | Output.Output> => {
  const stream = events(args.provider, args.file, args.nonStreaming)
  if (args.events) return Stream.runForEach(stream, (event) => Output.line(JSON.stringify(event)))
  return Accumulator.runTurn(stream).pipe(
    Effect.mapError((error) => (error._tag === "CliFailure" ? error : invalidInput(error.message))),
    Effect.flatMap((turn) => Output.line(JSON.stringify(Summary.fromTurn(turn))))
  )
}
