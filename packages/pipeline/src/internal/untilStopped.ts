import * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Stream from "effect/Stream"
import type { StopSignal } from "./stopSignal.js"

type Chunk<A> = Arr.NonEmptyReadonlyArray<A>

/**
 * How many elements the reader may hold untaken before it waits: many small network
 * reads (live pace, an event or two each), or one large one. A second large read
 * stays in the socket until the consumer takes the first.
 */
const capacity = 32

// What passes the input from the reader fiber to the consumer: the chunks the reader
// got and the consumer has not taken (the reader waits once they hold `capacity`
// elements), the end, and whichever side waits for the other.
class Handoff<A, E> {
  private chunks: Array<Chunk<A>> = []
  private size = 0
  private end: Effect.Effect<never, E | Cause.Done> | undefined = undefined
  private taker: ((effect: Effect.Effect<Chunk<A>, E | Cause.Done>) => void) | undefined = undefined
  private putter: ((effect: Effect.Effect<void>) => void) | undefined = undefined

  // The reader hands a chunk on; it waits while `capacity` elements are untaken.
  readonly put = (chunk: Chunk<A>): Effect.Effect<void> => {
    if (this.end !== undefined) return Effect.void
    const taker = this.taker
    if (taker !== undefined) {
      this.taker = undefined
      taker(Effect.succeed(chunk))
      return Effect.void
    }
    this.chunks.push(chunk)
    this.size += chunk.length
    if (this.size < capacity) return Effect.void
    return Effect.callback<void>((resume) => {
      if (this.size < capacity || this.end !== undefined) return resume(Effect.void)
      this.putter = resume
      return Effect.sync(() => {
        this.putter = undefined
      })
    })
  }

  // The consumer's pull: every chunk waiting, as one, or the end once they are taken.
  readonly take: Effect.Effect<Chunk<A>, E | Cause.Done> = Effect.suspend(() => {
    if (Arr.isArrayNonEmpty(this.chunks)) {
      const chunks = this.chunks
      this.chunks = []
      this.size = 0
      this.wakePutter()
      return Effect.succeed(chunks.length === 1 ? chunks[0] : Arr.flatten(chunks))
    }
    if (this.end !== undefined) return this.end
    return Effect.callback<Chunk<A>, E | Cause.Done>((resume) => {
      this.taker = resume
      return Effect.sync(() => {
        this.taker = undefined
      })
    })
  })

  // Ends the output after what was handed on (`drop`: without it).
  readonly close = (exit: Effect.Effect<never, E | Cause.Done>, drop: boolean): void => {
    if (this.end !== undefined) return
    this.end = exit
    if (drop) {
      this.chunks = []
      this.size = 0
    }
    this.wakePutter()
    const taker = this.taker
    this.taker = undefined
    if (taker !== undefined) taker(exit)
  }

  private wakePutter(): void {
    const putter = this.putter
    this.putter = undefined
    if (putter !== undefined) putter(Effect.void)
  }
}

const ended = <E>(exit: Exit.Exit<void, E>): Effect.Effect<never, E | Cause.Done> =>
  exit._tag === "Success" ? Cause.done() : Effect.failCause(exit.cause)

/**
 * The stream until `stop` stops, then its end. One fiber reads the input and hands
 * its chunks on (a handoff of a few fields rather than a `Queue`: one chunk costs a
 * check and, when the consumer waits, one resumption); the consumer takes whatever
 * was read since its last pull as one chunk. When the signal stops, its hook (run by
 * whoever stops it, no fiber waits) interrupts the reader at once (a read waiting on
 * the network too), drops what it read ahead, and ends the output. Nothing is forked
 * or raced per chunk.
 *
 * @internal
 */
export const untilStopped = <A, E, R, S>(
  self: Stream.Stream<A, E, R>,
  stop: StopSignal<S>
): Stream.Stream<A, E, R> =>
  Stream.unwrap(
    Effect.gen(function*() {
      const handoff = new Handoff<A, E>()
      // the input's end or failure ends the output after what was handed on; an
      // interrupted reader leaves it to the stopper
      const reader = yield* Stream.runForEachArray(self, handoff.put).pipe(
        Effect.exit,
        Effect.flatMap((exit) => Effect.sync(() => handoff.close(ended(exit), false))),
        Effect.forkScoped
      )
      yield* stop.onStop(Effect.sync(() => {
        reader.interruptUnsafe()
        handoff.close(Cause.done(), true)
      }))
      return Stream.fromPull(Effect.succeed(handoff.take))
    })
  )
