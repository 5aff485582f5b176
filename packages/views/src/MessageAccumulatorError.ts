/**
 * The docs/views.md#messageaccumulator-over-event-patches message accumulator, or the mapper feeding it, met a patch or event it
 * cannot take.
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"

/**
 * Why: a patch that is not an object or has an unknown `type` (`UnknownPatchType`) or
 * a known type with bad fields (`InvalidPatch`); a block started while a block of the
 * same type is open (`BlockAlreadyOpen`: the interleaving docs/views.md#messageaccumulator-over-event-patches cannot follow); a
 * delta or end with no open block of its type (`NoOpenBlock`); `UnclosedBlock` is no
 * longer raised (since 0.2.0 `message_end` closes open blocks; the name stays for
 * callers that match on it); a second `message_start`
 * (`DuplicateMessageStart`); anything after `message_end` (`MessageEnded`); a stream
 * that stopped before `message_end` (`MessageNotEnded`); or, in the StreamEvent mapper,
 * a finished item whose content does not extend what its deltas carried
 * (`ContentMismatch`), a delta or error for an item that never started (`UnknownItem`)
 * or an item started twice (`DuplicateItem`) or changed after it finished
 * (`ItemAlreadyDone`).
 *
 * @since 0.3.0
 * @category errors
 */
export class MessageAccumulatorError extends Schema.TaggedError<MessageAccumulatorError>()("MessageAccumulatorError", {
  reason: Schema.Literals([
    "UnknownPatchType",
    "InvalidPatch",
    "BlockAlreadyOpen",
    "NoOpenBlock",
    "UnclosedBlock",
    "DuplicateMessageStart",
    "MessageEnded",
    "MessageNotEnded",
    "ContentMismatch",
    "UnknownItem",
    "DuplicateItem",
    "ItemAlreadyDone"
  ]),
  /** The patch (or event) type, when it has one. */
  patchType: Schema.optionalKey(Schema.String),
  /** The position of the patch among those pushed, from 0. */
  patchIndex: Schema.optionalKey(Schema.Int),
  message: Schema.String
}) {}
