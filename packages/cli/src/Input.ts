/**
 * Reading the command's input: a file, or standard input for `-`.
 *
 * @since 0.1.0
 */
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Stream from "effect/Stream"
import { badUsage, type CliFailure } from "./CliFailure.js"

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
