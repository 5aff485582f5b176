/**
 * An `Output` whose standard output arrives line by line on a queue, for tests that
 * run a serving command in process and wait for what it prints.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import { Output } from "../../src/index.js"

/** A queue of the lines written to standard output, and the `Output` layer writing them. */
export const lines = Effect.gen(function*() {
  const queue = yield* Queue.unbounded<string>()
  let pending = ""
  const layer = Layer.succeed(Output.Output, {
    stdout: (text) =>
      Effect.suspend(() => {
        const parts = (pending + text).split("\n")
        pending = parts.pop()!
        return Queue.offerAll(queue, parts)
      }),
    stderr: () => Effect.void,
    log: () => undefined,
    isTTY: false,
    stderrStyled: false
  })
  return { queue, layer }
})

/** Takes lines until one is `found`, and returns it. */
export const takeUntil = (queue: Queue.Queue<string>, found: (line: string) => boolean) =>
  Effect.gen(function*() {
    while (true) {
      const line = yield* Queue.take(queue)
      if (found(line)) return line
    }
  })
