/**
 * Cancelling a live turn through the server, on redis-server: a `TurnPipeline` runs a
 * turn from a provider (`ProviderClient` against a loopback server that sends the
 * start of an Anthropic answer and then nothing more, as a slow model would), a reader
 * follows it, and `POST /v1/turns/:turnId/cancel` reaches the pipeline through Redis's
 * control stream: the provider's connection is closed within a second and the turn
 * ends `cancelled` in both streams. A read-only page token is refused first.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, layer } from "@effect/vitest"
import { TurnContext, TurnPipeline, TurnSource } from "@sluice/pipeline"
import { LlmRequest, ProviderClient } from "@sluice/providers"
import { RedisStreams, RedisStreamsLive } from "@sluice/redis"
import { fixture, serve as loopback } from "@sluice/testing/providers"
import {
  bearer,
  open,
  prefix,
  type Received,
  received,
  request,
  serve,
  takeEvents,
  tokens
} from "@sluice/testing/server"
import { TurnEntry, TurnKeys } from "@sluice/turns"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { inject } from "vitest"
import * as ViewerToken from "../src/ViewerToken.js"

// A database of its own.
const url = (() => {
  const base = new URL(inject("redisUrl"))
  base.pathname = "/7"
  return base.toString()
})()
const redis = RedisStreamsLive.layer({ url })
const pipeline = TurnPipeline.layer({ publisher: { prefix } })
const auth = bearer(tokens[0])

layer(Layer.provideMerge(pipeline, redis), { excludeTestServices: true })("cancelling a live turn", (it) => {
  describe("POST /v1/turns/:turnId/cancel", () => {
    it.effect(
      "reaches the producer through Redis: the provider's connection closes within 1 s, the turn ends cancelled",
      () =>
        Effect.gen(function*() {
          const base = yield* serve()
          // message_start, content_block_start, ping, two text deltas; then silence
          const provider = yield* loopback([{ _tag: "hang", body: fixture("anthropic/text-cache.sse"), events: 5 }])
          const client = yield* ProviderClient.make({
            provider: "anthropic",
            apiKeys: [Redacted.make("k1")],
            baseUrl: provider.url
          })
          const context = yield* TurnContext.make({ prefix })
          const source = TurnSource.events((turn) =>
            client.stream(LlmRequest.prompt("m1", "Hello"), {
              runId: turn.runId,
              turnId: turn.turnId,
              threadId: turn.threadId
            })
          )
          const running = yield* Effect.forkChild(TurnPipeline.run(context, source))
          yield* provider.hungWritten
          // a reader follows the turn until its text has arrived
          const turnUrl = `${base}/v1/turns/${context.turnId}`
          const opened = yield* Effect.retry(
            Effect.filterOrFail(open(`${turnUrl}/upserts`, auth), (o) => o.status === 200, (o) => `status ${o.status}`),
            { times: 200 }
          )
          const pull = yield* Stream.toPull(opened.events)
          const seen: Array<Received> = yield* takeEvents(pull, 2)
          // a read-only page token may not cancel
          const read = yield* ViewerToken.issue(ViewerToken.deriveKey(tokens), 60_000)
          expect((yield* request(`${turnUrl}/cancel?access_token=${read}`, {}, "POST")).status).toBe(403)
          expect(running.pollUnsafe() === undefined).toBe(true)
          const cancelled = yield* request(`${turnUrl}/cancel`, auth, "POST")
          expect(cancelled.status).toBe(202)
          const askedAt = Date.now()
          yield* provider.hungClosed
          expect(Date.now() - askedAt).toBeLessThan(1_000)
          const result = yield* Fiber.join(running)
          expect(result.turn.status).toBe("cancelled")
          expect(result.stopped).toStrictEqual(Option.some("cancelled"))
          // the reader gets the ending and its stream closes
          const end = yield* Effect.flip(
            Effect.forever(Effect.map(pull, (chunk) => seen.push(...Array.from(chunk, received))))
          )
          expect(Cause.isDone(end)).toBe(true)
          expect(JSON.parse(seen.at(-1)!.data)).toMatchObject({ type: "turn_completed", status: "cancelled" })
          const store = yield* RedisStreams.RedisStreams
          const streamB = yield* store.xrange(TurnKeys.upsertsKey(prefix, context.turnId), "-", "+")
          expect(streamB.filter(TurnEntry.isFinal).map((entry) => entry.id)).toStrictEqual([streamB.at(-1)!.id])
          const streamA = yield* store.xrange(TurnKeys.eventsKey(prefix, context.turnId), "-", "+")
          expect((yield* TurnEntry.toStreamEvent(streamA.at(-1)!)).payload).toMatchObject({
            type: "response_done",
            status: "cancelled"
          })
          // the turn has ended: cancelling again is 409
          expect((yield* request(`${turnUrl}/cancel`, auth, "POST")).status).toBe(409)
          const snapshot = yield* request(turnUrl, auth)
          expect(snapshot.body).toMatchObject({ status: "cancelled" })
        }).pipe(Effect.provide(NodeHttpClient.layerUndici)),
      60_000
    )
  })
})
