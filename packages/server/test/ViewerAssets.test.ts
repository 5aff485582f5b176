/**
 * The viewer page's build: the committed `src/internal/viewerAssets.ts` is what
 * `viewer/` builds to, and the page's wire types accept what the API sends. (That
 * `viewer/` type-checks against the DOM is `pnpm typecheck`'s to say.)
 */
import { describe, expect, it } from "@effect/vitest"
import { Wire } from "@sluice/client"
import { StreamBMessage, type UIUpsert } from "@sluice/core"
import { everyKind } from "@sluice/testing/server"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import * as TurnSnapshot from "../src/TurnSnapshot.js"
import { assetsModule, assetsModulePath } from "./support/viewerBuild.js"

// What the API sends is what the page's types describe (checked by the compiler).
const asWireUpsert = (upsert: UIUpsert.UIUpsert): Wire.Upsert => upsert
const asWireSnapshot = (snapshot: TurnSnapshot.TurnSnapshot): Wire.Snapshot => snapshot

describe("the viewer's build", () => {
  it.effect("src/internal/viewerAssets.ts is what viewer/ builds to (else: pnpm --filter @sluice/server build:viewer)", () =>
    Effect.gen(function*() {
      const built = yield* Effect.promise(assetsModule)
      expect(readFileSync(assetsModulePath, "utf8") === built).toBe(true)
    }))

  it.effect("the page's guards accept a snapshot and the upserts of every kind of item", () =>
    Effect.gen(function*() {
      const turnId = randomUUID()
      const payloads: Array<readonly [string, StreamBMessage.UIPayload]> = []
      for (const [i, message] of everyKind(turnId).entries()) {
        payloads.push([`0-${i + 1}`, yield* StreamBMessage.decodePayload(message.payload)])
      }
      const snapshot = TurnSnapshot.fromPayloads(turnId, payloads)
      expect(Wire.isSnapshot(JSON.parse(JSON.stringify(asWireSnapshot(snapshot))))).toBe(true)
      for (const [, payload] of payloads) {
        const parsed: unknown = JSON.parse(JSON.stringify(payload))
        expect(payload.type === "item_upsert" ? Wire.isUpsert(parsed) : Wire.isTurnEvent(parsed)).toBe(true)
        if (payload.type === "item_upsert") expect(asWireUpsert(payload).itemId).toBe(payload.itemId)
      }
      expect([
        Wire.isSnapshot({ ...snapshot, items: [{ type: "item_upsert" }] }),
        Wire.isUpsert(null),
        Wire.isTurnList({ turns: [{}] })
      ])
        .toStrictEqual([false, false, false])
    }))
})
