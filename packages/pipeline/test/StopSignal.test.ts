/**
 * The stop signal of a running turn: the first reason wins, each hook runs exactly
 * once (whether it was added before the stop or after it), and a hook whose scope has
 * closed is not run.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as StopSignal from "../src/internal/stopSignal.js"

describe("StopSignal", () => {
  it.effect("keeps the first reason and runs each hook once, before or after the stop", () =>
    Effect.gen(function*() {
      const signal = yield* StopSignal.make<string>()
      const runs = yield* Ref.make<ReadonlyArray<string>>([])
      const hook = (name: string) => Ref.update(runs, (all) => [...all, name])
      yield* signal.onStop(hook("before"))
      yield* signal.stop("cancelled")
      yield* signal.stop("aborted")
      yield* signal.onStop(hook("after"))
      expect(yield* Deferred.await(signal.reason)).toBe("cancelled")
      expect(yield* Ref.get(runs)).toEqual(["before", "after"])
    }).pipe(Effect.scoped))

  it.effect("does not run a hook whose scope closed before the stop", () =>
    Effect.gen(function*() {
      const signal = yield* StopSignal.make<string>()
      const runs = yield* Ref.make(0)
      const scope = yield* Scope.make()
      yield* Scope.provide(signal.onStop(Ref.update(runs, (n) => n + 1)), scope)
      yield* Scope.close(scope, Exit.void)
      yield* signal.stop("cancelled")
      expect(yield* Ref.get(runs)).toBe(0)
    }))
})
