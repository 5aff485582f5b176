/**
 * Exporting Sluice's spans with OpenTelemetry. The pipeline and the server make their
 * spans with Effect (`Effect.withSpan`, `Stream.withSpan`); these layers decide where
 * they go: to an OTLP collector when `OTEL_EXPORTER_OTLP_ENDPOINT` is set, nowhere
 * otherwise (Effect's own tracer keeps them in process).
 *
 * @since 0.1.0
 */
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { BatchSpanProcessor, type SpanProcessor } from "@opentelemetry/sdk-trace-base"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

/**
 * The service name spans are exported under unless `OTEL_SERVICE_NAME` says otherwise.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultServiceName = "sluice"

/**
 * Spans handed to the given OpenTelemetry span processors (an exporter of your own,
 * an in-memory one in tests), under the service name (`OTEL_SERVICE_NAME`, else
 * `sluice`). Pending spans are flushed when the layer's scope closes.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  processors: SpanProcessor | ReadonlyArray<SpanProcessor>,
  options: { readonly serviceName?: string | undefined } = {}
): Layer.Layer<never, ConfigError.ConfigError> =>
  Layer.unwrapEffect(Effect.map(
    Config.withDefault(Config.string("OTEL_SERVICE_NAME"), options.serviceName ?? defaultServiceName),
    (serviceName) =>
      Layer.discard(NodeSdk.layer(() => ({
        resource: { serviceName },
        spanProcessor: Array.isArray(processors) ? processors : [processors as SpanProcessor]
      })))
  ))

// The signal path the OTLP/HTTP specification appends to the base endpoint.
const tracesUrl = (endpoint: string): string => `${endpoint.replace(/\/+$/, "")}/v1/traces`

/**
 * OTLP export over HTTP (JSON) when `OTEL_EXPORTER_OTLP_ENDPOINT` is set
 * (for example `http://localhost:4318`; spans go to `<endpoint>/v1/traces`; the
 * exporter also reads `OTEL_EXPORTER_OTLP_HEADERS` and the other standard
 * variables), batched; nothing when it is not. For the CLI and any program that runs
 * the pipeline or the server.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFromEnv: Layer.Layer<never, ConfigError.ConfigError> = Layer.unwrapEffect(Effect.map(
  Config.option(Config.nonEmptyString("OTEL_EXPORTER_OTLP_ENDPOINT")),
  Option.match({
    onNone: () => Layer.empty,
    onSome: (endpoint) => layer(new BatchSpanProcessor(new OTLPTraceExporter({ url: tracesUrl(endpoint) })))
  })
))
