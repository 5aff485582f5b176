/**
 * The protocol's operations through their functions, no HTTP: each returns a typed
 * outcome or fails with a `DurableRefusal`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as DurableOperations from "../src/DurableOperations.js"
import { DurableRefusal } from "../src/DurableRefusal.js"
import { storeSource } from "../src/DurableSource.js"
import * as DurableStoreMemory from "../src/DurableStoreMemory.js"

const encode = (text: string) => new TextEncoder().encode(text)

const createRequest = (body = "", overrides: Partial<DurableOperations.CreateRequest> = {}) => ({
  contentType: "text/plain",
  typeGiven: true,
  ttl: undefined,
  expiresAt: undefined,
  closed: false,
  body: encode(body),
  fork: undefined,
  ...overrides
})

const appendRequest = (body: string, overrides: Partial<DurableOperations.AppendRequest> = {}) => ({
  contentType: "text/plain",
  seq: undefined,
  close: false,
  producer: undefined,
  body: encode(body),
  ...overrides
})

const refusalOf = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.flip(effect).pipe(
    Effect.map((error) => error instanceof DurableRefusal ? [error.status, error.code, error.message] : error)
  )

describe("DurableOperations", () => {
  it.effect("creates a stream, then finds it again with the same settings, refuses other settings", () =>
    Effect.gen(function*() {
      const store = yield* DurableStoreMemory.make
      const created = yield* DurableOperations.create(store, "a/b", createRequest("hello"))
      expect(created._tag).toBe("Created")
      expect(created.contentType).toBe("text/plain")
      expect(created.closed).toBe(false)
      const again = yield* DurableOperations.create(store, "a/b", createRequest())
      expect(again).toStrictEqual({ ...created, _tag: "Exists" })
      expect(yield* refusalOf(DurableOperations.create(store, "a/b", createRequest("", { closed: true }))))
        .toStrictEqual(
          [409, "CONFLICT", "the stream exists with other settings"]
        )
    }))

  it.effect("appends, takes a producer's repeated write as a duplicate, closes, and refuses after closing", () =>
    Effect.gen(function*() {
      const store = yield* DurableStoreMemory.make
      yield* DurableOperations.create(store, "s", createRequest())
      const producer = { id: "p", epoch: 0, seq: 0 }
      const first = yield* DurableOperations.append(store, "s", appendRequest("one", { producer }))
      expect(first).toMatchObject({ _tag: "Appended", closed: false, closeOnly: false, producer })
      const duplicate = yield* DurableOperations.append(store, "s", appendRequest("one", { producer }))
      expect(duplicate).toStrictEqual({ _tag: "Duplicate", producer, lastSeq: 0 })
      const gap = yield* Effect.flip(
        DurableOperations.append(store, "s", appendRequest("three", { producer: { ...producer, seq: 2 } }))
      )
      expect(gap).toBeInstanceOf(DurableRefusal)
      expect(gap instanceof DurableRefusal ? [gap.status, gap.headers] : undefined).toStrictEqual([
        409,
        { "producer-expected-seq": "1", "producer-received-seq": "2" }
      ])
      const closed = yield* DurableOperations.append(store, "s", appendRequest("", { close: true }))
      expect(closed).toMatchObject({ _tag: "Appended", closed: true, closeOnly: true })
      const closedAgain = yield* DurableOperations.append(store, "s", appendRequest("", { close: true }))
      expect(closedAgain._tag).toBe("AlreadyClosed")
      expect(yield* refusalOf(DurableOperations.append(store, "s", appendRequest("late")))).toStrictEqual([
        409,
        "CONFLICT",
        "the stream is closed"
      ])
    }))

  it.effect("reads the entries after an offset, the tail with `now`, and the head", () =>
    Effect.gen(function*() {
      const store = yield* DurableStoreMemory.make
      yield* DurableOperations.create(store, "r", createRequest("ab"))
      yield* DurableOperations.append(store, "r", appendRequest("cd"))
      const source = storeSource(store, "r")
      const view = yield* DurableOperations.head(source)
      const all = yield* DurableOperations.read(source, view, { offset: "-1", live: undefined, cursor: undefined }, 0)
      expect(all._tag).toBe("Entries")
      if (all._tag !== "Entries") return
      expect(all.entries.map((entry) => new TextDecoder().decode(entry.data))).toStrictEqual(["ab", "cd"])
      expect(all.upToDate).toBe(true)
      expect(all.closed).toBe(false)
      expect(all.cursor).toBeUndefined()
      const next = yield* DurableOperations.read(
        source,
        view,
        { offset: all.nextOffset, live: undefined, cursor: undefined },
        0
      )
      expect(next).toMatchObject({ _tag: "Entries", entries: [], nextOffset: all.nextOffset, upToDate: true })
      const tail = yield* DurableOperations.read(source, view, { offset: "now", live: undefined, cursor: undefined }, 0)
      expect(tail).toStrictEqual({ _tag: "AtTail", view })
    }))

  it.effect("a long-poll on a closed stream at its tail ends at once", () =>
    Effect.gen(function*() {
      const store = yield* DurableStoreMemory.make
      yield* DurableOperations.create(store, "c", createRequest("x", { closed: true }))
      const source = storeSource(store, "c")
      const view = yield* DurableOperations.head(source)
      const polled = yield* DurableOperations.read(source, view, {
        offset: "now",
        live: "long-poll",
        cursor: undefined
      }, 1)
      expect(polled).toMatchObject({ _tag: "TimedOut", view })
    }))

  it.effect("forks a stream at its tail, deletes the source (gone while the fork reads it)", () =>
    Effect.gen(function*() {
      const store = yield* DurableStoreMemory.make
      yield* DurableOperations.create(store, "src", createRequest("abc"))
      const forked = yield* DurableOperations.fork(store, "fork", createRequest("", { typeGiven: false }), {
        source: "src",
        at: undefined,
        sub: 0
      })
      expect(forked).toMatchObject({ _tag: "Created", contentType: "text/plain", closed: false })
      expect(yield* DurableOperations.remove(store, "src")).toStrictEqual({ _tag: "Deleted" })
      const gone = yield* refusalOf(DurableOperations.head(storeSource(store, "src")))
      expect(Array.isArray(gone) ? gone.slice(0, 2) : gone).toStrictEqual([410, "GONE"])
      expect(yield* refusalOf(DurableOperations.remove(store, "missing"))).toStrictEqual([
        404,
        "NOT_FOUND",
        "stream not found"
      ])
      const missing = yield* refusalOf(
        DurableOperations.fork(store, "other", createRequest(), { source: "missing", at: undefined, sub: 0 })
      )
      expect(missing).toStrictEqual([404, "NOT_FOUND", "the source stream does not exist"])
    }))
})
