/**
 * The scheduler of the server's request fibers: at most `tasksPerTurn` fiber slices a
 * turn of the event loop (docs/http.md#slow-readers). Effect's default scheduler gives
 * each fiber a dispatcher of its own, each with its own `setImmediate`: every fiber
 * that yielded or was woken since the last turn runs in the next one, so a burst of
 * 2,000 readers, each woken with its next write, runs in one turn, and a probe
 * (`/healthz`) that arrived meanwhile waits for all of it. Here the request fibers share
 * one queue, by priority then in order, run `tasksPerTurn` at a time: between two
 * groups the event loop reads its sockets (a probe is answered there), and no turn
 * does more than a group's work, however many readers wait.
 *
 * @internal
 */
import * as Scheduler from "effect/Scheduler"

/**
 * How many fiber slices one turn of the event loop runs (each at most
 * `MaxOpsBeforeYield` operations).
 *
 * @internal
 */
export const tasksPerTurn = 64

// The shared queue: buckets by priority, lower first, each in the order its tasks came.
class BoundedDispatcher implements Scheduler.SchedulerDispatcher {
  private buckets: Array<[priority: number, tasks: Array<() => void>]> = []
  private scheduled = false

  constructor(
    private readonly perTurn: number,
    private readonly setImmediate: (run: () => void) => void
  ) {}

  scheduleTask(task: () => void, priority: number): void {
    const buckets = this.buckets
    let index = 0
    while (index < buckets.length && buckets[index]![0] < priority) index++
    const bucket = buckets[index]
    if (bucket !== undefined && bucket[0] === priority) bucket[1].push(task)
    else buckets.splice(index, 0, [priority, [task]])
    this.schedule()
  }

  private schedule() {
    if (this.scheduled || this.buckets.length === 0) return
    this.scheduled = true
    this.setImmediate(this.turn)
  }

  // One turn: the first `perTurn` tasks queued before it (those they queue wait for the
  // next turn, as with Effect's own scheduler); the rest in the next turn.
  private readonly turn = () => {
    this.scheduled = false
    const taken = this.take(this.perTurn)
    try {
      for (const task of taken) task()
    } finally {
      this.schedule()
    }
  }

  private take(most: number): Array<() => void> {
    const taken: Array<() => void> = []
    while (taken.length < most && this.buckets.length > 0) {
      const tasks = this.buckets[0]![1]
      const count = Math.min(most - taken.length, tasks.length)
      for (const task of tasks.splice(0, count)) taken.push(task)
      if (tasks.length === 0) this.buckets.shift()
    }
    return taken
  }

  flush(): void {
    while (this.buckets.length > 0) {
      for (const task of this.take(Number.POSITIVE_INFINITY)) task()
    }
  }
}

/**
 * A scheduler whose fibers share one queue, `perTurn` tasks a turn of the event loop
 * (`setImmediate`, given for tests); when a fiber yields is Effect's default.
 *
 * @internal
 */
export const make = (
  perTurn: number = tasksPerTurn,
  setImmediateFn: (run: () => void) => void = (run) => void setImmediate(run)
): Scheduler.Scheduler => {
  const base = new Scheduler.MixedScheduler()
  const dispatcher = new BoundedDispatcher(Math.max(1, perTurn), setImmediateFn)
  return {
    executionMode: "async",
    shouldYield: (fiber) => base.shouldYield(fiber),
    makeDispatcher: () => dispatcher
  }
}
