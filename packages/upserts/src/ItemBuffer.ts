/**
 * The state of one item while it streams (docs/upserts.md's `ItemBuffer`): its content so
 * far, how much of it has been emitted, where it stands on the batch gradient, and
 * whether it is held until `item_done`. Immutable: every operation returns a new
 * buffer, so the stage can keep buffers in a `Ref` and commit a change only once its
 * upserts are delivered.
 *
 * @since 0.1.0
 */
import type { OutputItem, UIUpsert } from "@sluice/core"
import { Text, Tokens } from "@sluice/core"
import { dual } from "effect/Function"
import * as Gradient from "./Gradient.js"

/**
 * An item's buffer.
 *
 * @since 0.1.0
 * @category models
 */
export interface ItemBuffer {
  readonly itemId: string
  readonly itemType: UIUpsert.UIUpsertItemType
  readonly content: string
  /** Position on the gradient: the next threshold is `thresholdAt(gradient, batchIndex)`. */
  readonly batchIndex: number
  /** Characters of `content` already carried by an emitted upsert. */
  readonly emittedLength: number
  readonly held: boolean
  readonly complete: boolean
  readonly createdEmitted: boolean
  readonly origin?: OutputItem.MessageOrigin
  readonly providerId?: string
  readonly toolName?: string
  readonly callId?: string
}

/**
 * Constructor options (docs/upserts.md's `ItemBufferOptions`).
 *
 * @since 0.1.0
 * @category models
 */
export interface ItemBufferOptions {
  readonly initialContent?: string | undefined
  readonly origin?: OutputItem.MessageOrigin | undefined
  readonly providerId?: string | undefined
  readonly toolName?: string | undefined
  readonly callId?: string | undefined
  readonly isHeld?: boolean | undefined
}

/**
 * The full internal state, for debugging and tests (docs/upserts.md's `ItemBufferState`).
 *
 * @since 0.1.0
 * @category models
 */
export interface ItemBufferState {
  readonly itemId: string
  readonly itemType: UIUpsert.UIUpsertItemType
  readonly content: string
  readonly tokenCount: number
  readonly batchIndex: number
  readonly emittedTokenCount: number
  readonly isComplete: boolean
  readonly isHeld: boolean
  readonly hasEmittedCreated: boolean
  readonly origin?: OutputItem.MessageOrigin
  readonly providerId?: string
  readonly toolName?: string
  readonly callId?: string
}

/**
 * What `getBufferState` reports per item (docs/upserts.md's `BufferInfo`).
 *
 * @since 0.1.0
 * @category models
 */
export interface BufferInfo {
  readonly itemId: string
  readonly itemType: UIUpsert.UIUpsertItemType
  readonly tokenCount: number
  readonly contentLength: number
  readonly batchIndex: number
  readonly isHeld: boolean
  readonly isComplete: boolean
}

/**
 * A new buffer with nothing emitted yet.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  itemId: string,
  itemType: UIUpsert.UIUpsertItemType,
  options: ItemBufferOptions = {}
): ItemBuffer => {
  const buffer: { -readonly [K in keyof ItemBuffer]: ItemBuffer[K] } = {
    itemId,
    itemType,
    content: options.initialContent ?? "",
    batchIndex: 0,
    emittedLength: 0,
    held: options.isHeld ?? false,
    complete: false,
    createdEmitted: false
  }
  if (options.origin !== undefined) buffer.origin = options.origin
  if (options.providerId !== undefined) buffer.providerId = options.providerId
  if (options.toolName !== undefined) buffer.toolName = options.toolName
  if (options.callId !== undefined) buffer.callId = options.callId
  return buffer
}

/**
 * Appends a delta to the content.
 *
 * @since 0.1.0
 * @category combinators
 */
export const appendContent: {
  (delta: string): (self: ItemBuffer) => ItemBuffer
  (self: ItemBuffer, delta: string): ItemBuffer
} = dual(
  2,
  (
    self: ItemBuffer,
    delta: string
  ): ItemBuffer => (delta === "" ? self : { ...self, content: Text.append(self.content, delta) })
)

/**
 * The content so far.
 *
 * @since 0.1.0
 * @category accessors
 */
export const getContent = (self: ItemBuffer): string => self.content

/**
 * The estimated token count of the content (characters / 4, rounded up).
 *
 * @since 0.1.0
 * @category accessors
 */
export const getTokenCount = (self: ItemBuffer): number => Tokens.tokensForLength(self.content.length)

/**
 * Tokens gained since the last emitted upsert.
 *
 * @since 0.1.0
 * @category accessors
 */
export const getUnemittedTokenCount = (self: ItemBuffer): number =>
  getTokenCount(self) - Tokens.tokensForLength(self.emittedLength)

/**
 * Whether the content holds characters no emitted upsert has carried yet.
 *
 * @since 0.1.0
 * @category predicates
 */
export const hasUnemittedContent = (self: ItemBuffer): boolean => self.content.length > self.emittedLength

/**
 * Records that an upsert carried the whole current content.
 *
 * @since 0.1.0
 * @category combinators
 */
export const markEmitted = (self: ItemBuffer): ItemBuffer => ({ ...self, emittedLength: self.content.length })

/**
 * Moves to the next gradient level.
 *
 * @since 0.1.0
 * @category combinators
 */
export const advanceBatchIndex = (self: ItemBuffer): ItemBuffer => ({ ...self, batchIndex: self.batchIndex + 1 })

/**
 * Moves past every gradient threshold the content has reached, so that each threshold
 * gives at most one upsert however large the delta that crossed it.
 *
 * @since 0.1.0
 * @category combinators
 */
export const advancePastReached: {
  (gradient: Gradient.Gradient): (self: ItemBuffer) => ItemBuffer
  (self: ItemBuffer, gradient: Gradient.Gradient): ItemBuffer
} = dual(2, (self: ItemBuffer, gradient: Gradient.Gradient): ItemBuffer => {
  const batchIndex = Gradient.indexAfter(gradient, self.batchIndex, getTokenCount(self))
  return batchIndex === self.batchIndex ? self : { ...self, batchIndex }
})

/**
 * Whether the content has reached the threshold of the current gradient level (past
 * the listed steps, also the gradient's growth over what was last emitted:
 * `Gradient.nextThreshold`).
 *
 * @since 0.1.0
 * @category predicates
 */
export const reachedThreshold: {
  (gradient: Gradient.Gradient): (self: ItemBuffer) => boolean
  (self: ItemBuffer, gradient: Gradient.Gradient): boolean
} = dual(
  2,
  (self: ItemBuffer, gradient: Gradient.Gradient): boolean =>
    getTokenCount(self) >=
      Gradient.nextThreshold(gradient, self.batchIndex, Tokens.tokensForLength(self.emittedLength))
)

/**
 * The current gradient level.
 *
 * @since 0.1.0
 * @category accessors
 */
export const getBatchIndex = (self: ItemBuffer): number => self.batchIndex

/**
 * Marks the item complete.
 *
 * @since 0.1.0
 * @category combinators
 */
export const markComplete = (self: ItemBuffer): ItemBuffer => ({ ...self, complete: true })

/**
 * Whether the item is complete.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isComplete = (self: ItemBuffer): boolean => self.complete

/**
 * Whether the item is held until `item_done` (user messages, tool calls and outputs).
 *
 * @since 0.1.0
 * @category predicates
 */
export const isHeld = (self: ItemBuffer): boolean => self.held

/**
 * Sets the held state.
 *
 * @since 0.1.0
 * @category combinators
 */
export const setHeld: {
  (held: boolean): (self: ItemBuffer) => ItemBuffer
  (self: ItemBuffer, held: boolean): ItemBuffer
} = dual(2, (self: ItemBuffer, held: boolean): ItemBuffer => ({ ...self, held }))

/**
 * Whether a `created` upsert has been emitted.
 *
 * @since 0.1.0
 * @category predicates
 */
export const hasEmittedCreated = (self: ItemBuffer): boolean => self.createdEmitted

/**
 * Records that the `created` upsert has been emitted.
 *
 * @since 0.1.0
 * @category combinators
 */
export const markCreatedEmitted = (self: ItemBuffer): ItemBuffer => ({ ...self, createdEmitted: true })

/**
 * The full state (docs/upserts.md's `getState`).
 *
 * @since 0.1.0
 * @category accessors
 */
export const getState = (self: ItemBuffer): ItemBufferState => {
  const state: { -readonly [K in keyof ItemBufferState]: ItemBufferState[K] } = {
    itemId: self.itemId,
    itemType: self.itemType,
    content: self.content,
    tokenCount: getTokenCount(self),
    batchIndex: self.batchIndex,
    emittedTokenCount: Tokens.tokensForLength(self.emittedLength),
    isComplete: self.complete,
    isHeld: self.held,
    hasEmittedCreated: self.createdEmitted
  }
  if (self.origin !== undefined) state.origin = self.origin
  if (self.providerId !== undefined) state.providerId = self.providerId
  if (self.toolName !== undefined) state.toolName = self.toolName
  if (self.callId !== undefined) state.callId = self.callId
  return state
}

/**
 * The public summary (docs/upserts.md's `toBufferInfo`).
 *
 * @since 0.1.0
 * @category accessors
 */
export const toBufferInfo = (self: ItemBuffer): BufferInfo => ({
  itemId: self.itemId,
  itemType: self.itemType,
  tokenCount: getTokenCount(self),
  contentLength: self.content.length,
  batchIndex: self.batchIndex,
  isHeld: self.held,
  isComplete: self.complete
})
