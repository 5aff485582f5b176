/**
 * The command's span export: the application's choice of exporter. The pipeline and
 * the server make their spans with Effect (`Effect.withSpan`, `Stream.withSpan`) and
 * depend on no OpenTelemetry package; these layers decide where the spans go: to an
 * OTLP collector when `OTEL_EXPORTER_OTLP_ENDPOINT` is set, nowhere otherwise
 * (Effect's own tracer keeps them in process). The OpenTelemetry modules are loaded
 * only when spans are exported, so a command that exports nothing starts without
 * them (they are bundled into a chunk of their own). Up to 0.2.0 this was
 * `Tracing` of `@sluice/pipeline` (`layer`, `layerFromEnv`).
 *
 * @internal
 */
import type { SpanProcessor } from "@opentelemetry/sdk-trace-base"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

/** The service name spans are exported under unless `OTEL_SERVICE_NAME` says otherwise. */
export const defaultServiceName = "sluice"

const isProcessorArray = (
  processors: SpanProcessor | ReadonlyArray<SpanProcessor>
): processors is ReadonlyArray<SpanProcessor> => Array.isArray(processors)

/**
 * Spans handed to the given OpenTelemetry span processors (an exporter of your own,
 * an in-memory one in tests), under the service name (`OTEL_SERVICE_NAME`, else
 * `sluice`). Pending spans are flushed when the layer's scope closes.
 */
export const layer = (
  processors: SpanProcessor | ReadonlyArray<SpanProcessor>,
  options: { readonly serviceName?: string | undefined } = {}
): Layer.Layer<never, Config.ConfigError> =>
  Layer.unwrap(Effect.gen(function*() {
    const serviceName = yield* Config.withDefault(
      Config.String("OTEL_SERVICE_NAME"),
      options.serviceName ?? defaultServiceName
    )
    // loaded when spans are exported, with the OpenTelemetry SDK modules it loads
    const NodeSdk = yield* Effect.promise(() => import("@effect/opentelemetry/NodeSdk"))
    // the layer's output (its `Resource`) is not part of the type; its tracer is
    // provided with it, so the context is kept whole
    const sdk: Layer.Layer<never> = NodeSdk.layer(() => ({
      resource: { serviceName },
      spanProcessor: isProcessorArray(processors) ? processors : [processors]
    }))
    return sdk
  }))

// The signal path the OTLP/HTTP specification appends to the base endpoint.
const tracesUrl = (endpoint: string): string => `${endpoint.replace(/\/+$/, "")}/v1/traces`

/**
 * OTLP export over HTTP (JSON) when `OTEL_EXPORTER_OTLP_ENDPOINT` is set
 * (for example `http://localhost:4318`; spans go to `<endpoint>/v1/traces`; the
 * exporter also reads `OTEL_EXPORTER_OTLP_HEADERS` and the other standard
 * variables), batched; nothing when it is not. The outermost layer of the
 * executable, so pending spans are flushed before the process exits.
 */
export const layerConfig: Layer.Layer<never, Config.ConfigError> = Layer.unwrap(Effect.flatMap(
  Config.option(Config.NonEmptyString("OTEL_EXPORTER_OTLP_ENDPOINT")),
  Option.match({
    onNone: () => Effect.succeed(Layer.empty),
    // the exporter's modules are loaded only when spans are exported
    onSome: (endpoint) =>
      Effect.map(
        Effect.promise(() =>
          Promise.all([import("@opentelemetry/sdk-trace-base"), import("@opentelemetry/exporter-trace-otlp-http")])
        ),
        ([{ BatchSpanProcessor }, { OTLPTraceExporter }]) =>
          layer(new BatchSpanProcessor(new OTLPTraceExporter({ url: tracesUrl(endpoint) })))
      )
  })
))
