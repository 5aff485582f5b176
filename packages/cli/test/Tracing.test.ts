/**
 * A replayed turn, traced: its spans form the expected tree under the caller's
 * `traceparent` (captured with OpenTelemetry's in-memory exporter through
 * `Tracing.layer`), and `Tracing.layerConfig` exports spans over OTLP/HTTP. The
 * exporter is the command's (up to 0.2.0 it was `Tracing` of `@sluice/pipeline`); the
 * pipeline's own trace context and metrics tests stay in
 * `packages/pipeline/test/Tracing.test.ts`.
 */
import { describe, expect, it } from "@effect/vitest"
import { SpanStatusCode } from "@opentelemetry/api"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { TurnContext, TurnPipeline, TurnSource } from "@sluice/pipeline"
import { RedisStreams, RedisStreamsMemory } from "@sluice/redis"
import { transcriptPath } from "@sluice/testing/fixtures"
import { TurnEntry, TurnKeys } from "@sluice/turns"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { readFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import * as Tracing from "../src/internal/tracing.js"

const prefix = "tracing-test"
// the pipeline's recorded transcript
const transcript = new Uint8Array(
  readFileSync(transcriptPath("anthropic-text.sse"))
)
const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
const traceparent = `00-${traceId}-00f067aa0ba902b7-01`

const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId

describe("Tracing", () => {
  it.effect("a turn's spans are children of the caller's traceparent, one per stage", () => {
    const exporter = new InMemorySpanExporter()
    const layer = TurnPipeline.layer({ publisher: { prefix } }).pipe(
      Layer.provideMerge(RedisStreamsMemory.layer),
      Layer.provideMerge(Tracing.layer(new SimpleSpanProcessor(exporter)))
    )
    return Effect.gen(function*() {
      const context = yield* TurnContext.make({ traceparent, tracestate: "vendor=1" })
      const result = yield* TurnPipeline.run(context, TurnSource.sse("anthropic", Stream.make(transcript)))
      expect(result.turn.status).toBe("complete")

      const spans = exporter.getFinishedSpans()
      const turn = spans.find((span) => span.name === "sluice.turn")
      expect(turn).toBeDefined()
      expect(turn!.spanContext().traceId).toBe(traceId)
      expect(parentOf(turn!)).toBe("00f067aa0ba902b7")
      expect(turn!.attributes["sluice.turn_id"]).toBe(context.turnId)
      expect(turn!.attributes["sluice.status"]).toBe("complete")
      const stages = spans.filter((span) => parentOf(span) === turn!.spanContext().spanId).map((span) => span.name)
      expect(new Set(stages)).toStrictEqual(
        new Set(["sluice.normalize", "sluice.publish.events", "sluice.upserts", "sluice.publish.upserts"])
      )
      expect(spans.every((span) => span.spanContext().traceId === traceId)).toBe(true)

      // every event of Stream A carries the caller's trace context
      const redis = yield* RedisStreams.RedisStreams
      const entries = yield* redis.xrange(TurnKeys.eventsKey(prefix, context.turnId), "-", "+")
      const events = yield* Effect.forEach(entries, TurnEntry.toStreamEvent)
      expect(events.length).toBeGreaterThan(3)
      for (const event of events) {
        expect(event.trace_context).toStrictEqual({ traceparent, tracestate: "vendor=1" })
      }
    }).pipe(Effect.provide(layer))
  })

  it.effect("a stage that fails ends its span with the failure; every stage span ends within the turn's", () => {
    const exporter = new InMemorySpanExporter()
    const layer = TurnPipeline.layer({ publisher: { prefix } }).pipe(
      Layer.provideMerge(RedisStreamsMemory.layer),
      Layer.provideMerge(Tracing.layer(new SimpleSpanProcessor(exporter)))
    )
    // the transcript's first half, then bytes that are not SSE JSON
    const broken = Stream.make(transcript.subarray(0, 400), new TextEncoder().encode("data: {not json\n\n"))
    return Effect.gen(function*() {
      const context = yield* TurnContext.make({ traceparent })
      const failure = yield* Effect.flip(TurnPipeline.run(context, TurnSource.sse("anthropic", broken)))
      expect(failure._tag).toBe("WireDecodeError")
      const spans = exporter.getFinishedSpans()
      const turn = spans.find((span) => span.name === "sluice.turn")!
      const stages = spans.filter((span) => parentOf(span) === turn.spanContext().spanId)
      expect(stages.map((span) => span.name).sort()).toStrictEqual(
        ["sluice.normalize", "sluice.publish.events", "sluice.publish.upserts", "sluice.upserts"]
      )
      const normalize = stages.find((span) => span.name === "sluice.normalize")!
      expect(normalize.status.code).toBe(SpanStatusCode.ERROR)
      const nanos = ([seconds, fraction]: readonly [number, number]) =>
        BigInt(seconds) * 1_000_000_000n + BigInt(fraction)
      for (const stage of stages) {
        expect(nanos(stage.startTime) >= nanos(turn.startTime)).toBe(true)
        expect(nanos(stage.endTime) <= nanos(turn.endTime)).toBe(true)
      }
    }).pipe(Effect.provide(layer))
  })
})

describe("Tracing.layerConfig (up to 0.2.0 the pipeline's Tracing.layerFromEnv)", () => {
  it.live(
    "exports spans over OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT, nothing when it is unset",
    () =>
      Effect.gen(function*() {
        const received: Array<{ readonly path: string; readonly body: string }> = []
        const server = yield* Effect.acquireRelease(
          Effect.callback<Server>((resume) => {
            const made = createServer((request, response) => {
              let body = ""
              request.on("data", (chunk: Buffer) => {
                body += chunk.toString("utf8")
              })
              request.on("end", () => {
                received.push({ path: request.url ?? "", body })
                response.writeHead(200, { "content-type": "application/json" }).end("{}")
              })
            })
            made.listen(0, "127.0.0.1", () => {
              resume(Effect.succeed(made))
            })
          }),
          (made) =>
            Effect.callback<void>((resume) => {
              made.close(() => resume(Effect.void))
            })
        )
        const address = server.address()
        if (address === null || typeof address === "string") {
          return yield* Effect.die(new Error("expected a TCP address"))
        }
        const endpoint = `http://127.0.0.1:${address.port}/`
        const traced = (env: ReadonlyArray<readonly [string, string]>) =>
          Effect.void.pipe(
            Effect.withSpan("operating.check", { attributes: { "check.id": "exported" } }),
            Effect.provide(Tracing.layerConfig),
            Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown(Object.fromEntries(env)))
          )
        // unset: the layer is empty, nothing is sent
        yield* traced([])
        expect(received).toStrictEqual([])
        // set: the span is flushed to <endpoint>/v1/traces when the layer closes
        yield* traced([["OTEL_EXPORTER_OTLP_ENDPOINT", endpoint], ["OTEL_SERVICE_NAME", "sluice-test"]])
        expect(received.map((request) => request.path)).toStrictEqual(["/v1/traces"])
        expect(received[0]!.body).toContain("operating.check")
        expect(received[0]!.body).toContain("sluice-test")
      }),
    60_000
  )
})
