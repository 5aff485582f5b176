/**
 * The input is not what the provider's wire format allows: not JSON, or JSON of the
 * wrong shape. Names the provider, the SSE line (or `0` for a non-streaming body) and
 * what was wrong.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * @since 0.1.0
 * @category errors
 */
export class WireDecodeError extends Schema.TaggedError<WireDecodeError>()("WireDecodeError", {
  provider: Schema.String,
  line: Schema.Int,
  reason: Schema.Literals(["InvalidJson", "UnexpectedShape"]),
  message: Schema.String
}) {}
