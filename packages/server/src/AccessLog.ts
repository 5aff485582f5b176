/**
 * Whether the server logs one line per answered request (method, the target with its
 * credentials redacted, status, duration). Off unless asked for: an application that
 * embeds the server chooses its own logging; `sluice serve` turns it on. Provide `true`
 * where the server is built (`TurnServer.layer(...).pipe(Layer.provide(AccessLog.layer))`)
 * or around an app of `TurnServer.makeApp`.
 *
 * @since 0.3.0
 */
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"

/**
 * The access log switch (default off).
 *
 * @since 0.3.0
 * @category references
 */
export const AccessLog: Context.Reference<boolean> = Context.Reference<boolean>("@sluice/server/AccessLog", {
  defaultValue: () => false
})

/**
 * The access log on, for the layers it is provided to.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer: Layer.Layer<never> = Layer.succeed(AccessLog, true)
