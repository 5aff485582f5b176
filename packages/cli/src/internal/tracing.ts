/**
 * The command's span export: `Tracing.layerFromEnv` of `@sluice/pipeline` (OTLP when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is set), whose OpenTelemetry modules are loaded only
 * when that variable is set, so a command that exports nothing starts without them.
 *
 * @internal
 */
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

/** Spans to OTLP when configured; pending spans are flushed when the layer closes. */
export const layerFromEnv: Layer.Layer<never, Config.ConfigError> = Layer.unwrap(
  Effect.flatMap(
    Config.option(Config.NonEmptyString("OTEL_EXPORTER_OTLP_ENDPOINT")),
    (endpoint) =>
      Option.isNone(endpoint)
        ? Effect.succeed(Layer.empty)
        : Effect.map(
          Effect.promise(() => import("@sluice/pipeline/Tracing")),
          (Tracing) => Tracing.layerFromEnv
        )
  )
)
