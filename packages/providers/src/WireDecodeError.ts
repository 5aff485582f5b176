/**
 * The input is not what the provider's wire format allows: not JSON (`InvalidJson`),
 * JSON of the wrong shape (`UnexpectedShape`), or an event the format does not allow
 * where it came (`InvalidOrder`: a second start of the response, an event after the
 * response ended, an event for a content block that is not open, or a block opened
 * twice; the message names the event and what it came after). Names the provider, the
 * SSE line (or `0` for a non-streaming body) and what was wrong.
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
  reason: Schema.Literals(["InvalidJson", "UnexpectedShape", "InvalidOrder"]),
  message: Schema.String
}) {}
