/**
 * One clock for the timers of a process: every timer scheduled on a wheel waits in
 * one heap, and one fiber sleeps until the earliest is due, runs the tasks that are
 * due, and sleeps again. A timer costs an entry, never a fiber. The wheel sleeps on
 * Effect's `Clock`, so `TestClock` drives it.
 *
 * A task runs in the wheel's fiber and must not wait: a task that may (a delivery
 * under backpressure, a lock) forks itself where its owner can interrupt it. A task
 * that fails or dies is logged; the wheel goes on.
 *
 * @since 0.3.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"

/**
 * A scheduled timer: `cancel` keeps its task from running (a no-op once it ran).
 *
 * @since 0.3.0
 * @category models
 */
export interface Timer {
  readonly cancel: Effect.Effect<void>
}

/**
 * The wheel: `schedule(at, task)` runs `task` once the Clock reaches `at`
 * (milliseconds since the epoch), at once when `at` has passed.
 *
 * @since 0.3.0
 * @category models
 */
export interface TimerWheelService {
  readonly schedule: (at: number, task: Effect.Effect<void>) => Effect.Effect<Timer>
  /** How many timers wait. */
  readonly size: Effect.Effect<number>
}

/**
 * The process's timer wheel.
 *
 * @since 0.3.0
 * @category services
 */
export class TimerWheel extends Context.Service<TimerWheel, TimerWheelService>()("@sluice/core/TimerWheel") {}

interface Entry {
  readonly at: number
  readonly order: number
  readonly task: Effect.Effect<void>
  cancelled: boolean
}

// An entry is due before another when its time is earlier, or the same and it was
// scheduled first.
const before = (a: Entry, b: Entry): boolean => a.at < b.at || (a.at === b.at && a.order < b.order)

// A binary min-heap of entries.
class Heap {
  private readonly entries: Array<Entry> = []

  get top(): Entry | undefined {
    return this.entries[0]
  }

  push(entry: Entry): void {
    const entries = this.entries
    entries.push(entry)
    let i = entries.length - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!before(entries[i]!, entries[parent]!)) break
      ;[entries[i], entries[parent]] = [entries[parent]!, entries[i]!]
      i = parent
    }
  }

  pop(): Entry | undefined {
    const entries = this.entries
    const top = entries[0]
    const last = entries.pop()
    if (entries.length > 0 && last !== undefined) {
      entries[0] = last
      let i = 0
      for (;;) {
        const left = 2 * i + 1
        const right = left + 1
        let least = i
        if (left < entries.length && before(entries[left]!, entries[least]!)) least = left
        if (right < entries.length && before(entries[right]!, entries[least]!)) least = right
        if (least === i) break
        ;[entries[i], entries[least]] = [entries[least]!, entries[i]!]
        i = least
      }
    }
    return top
  }
}

/**
 * A wheel whose fiber runs in the scope.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make: Effect.Effect<TimerWheelService, never, Scope.Scope> = Effect.gen(function*() {
  const heap = new Heap()
  let waiting = 0
  let order = 0
  // woken when a timer is scheduled (it may be due before the wheel's next wake)
  const scheduled = yield* Queue.sliding<void>(1)

  const round = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    for (let top = heap.top; top !== undefined && top.at <= now; top = heap.top) {
      heap.pop()
      if (top.cancelled) continue
      top.cancelled = true
      waiting--
      yield* top.task.pipe(Effect.catchCause((cause) => Effect.logWarning("a timer's task failed", cause)))
    }
    // cancelled entries are dropped from the top as they come
    while (heap.top?.cancelled === true) heap.pop()
    const next = heap.top
    const wake = Queue.take(scheduled)
    yield* next === undefined ? wake : Effect.raceFirst(Effect.sleep(Math.max(0, next.at - now)), wake)
  })
  yield* Effect.forkScoped(Effect.forever(round))

  return {
    schedule: (at, task) =>
      Effect.suspend(() => {
        const entry: Entry = { at, order: order++, task, cancelled: false }
        heap.push(entry)
        waiting++
        return Effect.as(Queue.offer(scheduled, undefined), {
          cancel: Effect.sync(() => {
            if (entry.cancelled) return
            entry.cancelled = true
            waiting--
          })
        })
      }),
    size: Effect.sync(() => waiting)
  }
})

/**
 * The wheel as a layer.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer: Layer.Layer<TimerWheel> = Layer.effect(TimerWheel, make)
