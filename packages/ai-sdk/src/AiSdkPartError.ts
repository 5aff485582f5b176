/**
 * A part of an AI SDK stream that Sluice cannot read.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * A part whose `type` Sluice reads had fields of the wrong shape (`InvalidPart`), or a
 * content part arrived after the turn ended with `finish` or `abort`
 * (`PartAfterFinish`). `partIndex` counts the parts from 0.
 *
 * @since 0.1.0
 * @category errors
 */
export class AiSdkPartError extends Schema.TaggedError<AiSdkPartError>()("AiSdkPartError", {
  reason: Schema.Literals(["InvalidPart", "PartAfterFinish"]),
  partType: Schema.optionalKey(Schema.String),
  partIndex: Schema.Int,
  message: Schema.String
}) {}
