/**
 * Reading the command's input: a file, or standard input for `-`.
 *
 * @since 0.1.0
 */
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Stream from "effect/Stream"
import { badUsage, type CliFailure, invalidInput } from "./CliFailure.js"

/**
 * The bytes of a file, or of standard input when `path` is `-`. A file that cannot be
 * opened is bad usage (exit code 2).
 *
 * @since 0.1.0
 * @category input
 */
export const bytes = (path: string): Stream.Stream<Uint8Array, CliFailure, FileSystem.FileSystem> =>
  path === "-"
    ? NodeStream.fromReadable({
      evaluate: () => process.stdin,
      onError: (error) => badUsage(`cannot read standard input: ${String(error)}`)
    })
    : Stream.unwrap(
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const exists = yield* fs.exists(path).pipe(Effect.orElseSucceed(() => false))
        if (!exists) return yield* Effect.fail(badUsage(`cannot read ${path}: no such file`))
        return fs.stream(path, { chunkSize: 64 * 1024 }).pipe(
          Stream.mapError((error) => badUsage(`cannot read ${path}: ${error.message}`))
        )
      })
    )

/**
 * The whole input as text.
 *
 * @since 0.1.0
 * @category input
 */
export const text = (path: string): Effect.Effect<string, CliFailure, FileSystem.FileSystem> =>
  bytes(path).pipe(Stream.decodeText(), Stream.mkString)

// The longest first line read to tell SSE from something else.
const headLimit = 4096

const fieldLine = /^(?:data|event|id|retry)(?::|$)|^:/

/**
 * What the start of a body says: `sse` when its first line that is not blank is an SSE
 * field (`data:`, `event:`, `id:`, `retry:`) or comment (`:`), the first line when it
 * is not, `undefined` while that line is not complete (`ended`: the body ended).
 */
const sseHead = (text: string, ended: boolean): "sse" | { readonly line: string } | undefined => {
  const body = text.replace(/^\uFEFF/, "").replace(/^[\r\n]+/, "")
  const end = body.search(/[\r\n]/)
  if (end === -1 && !ended && body.length < headLimit) return undefined
  if (body === "") return "sse"
  const line = (end === -1 ? body : body.slice(0, end)).slice(0, headLimit)
  return fieldLine.test(line) ? "sse" : { line }
}

/**
 * The bytes of an SSE body (`bytes`), failing as bad input (exit code 1) when its
 * first line is not an SSE field or comment: a file that is not SSE at all is named as
 * such, with its first line, instead of ending as a truncated stream.
 *
 * @since 0.3.0
 * @category input
 */
export const sseBytes = (path: string): Stream.Stream<Uint8Array, CliFailure, FileSystem.FileSystem> =>
  Stream.suspend(() => {
    const decoder = new TextDecoder()
    const name = path === "-" ? "standard input" : path
    let head = ""
    let decided = false
    const verdict = (ended: boolean): Effect.Effect<void, CliFailure> => {
      const said = sseHead(head, ended)
      if (said === undefined) return Effect.void
      decided = true
      head = ""
      if (said === "sse") return Effect.void
      const shown = said.line.length > 80 ? `${said.line.slice(0, 77)}...` : said.line
      return Effect.fail(
        invalidInput(
          `${name} is not SSE: its first line ${
            JSON.stringify(shown)
          } is not an SSE field (data:, event:, id:, retry:) or comment (:)`
        )
      )
    }
    return bytes(path).pipe(
      Stream.mapEffect((chunk) => {
        if (decided) return Effect.succeed(chunk)
        head += decoder.decode(chunk, { stream: true })
        return Effect.as(verdict(false), chunk)
      }),
      Stream.concat(Stream.fromEffect(Effect.suspend(() => (decided ? Effect.void : verdict(true)))).pipe(Stream.drain))
    )
  })
