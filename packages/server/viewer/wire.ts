/**
 * What the page reads from the turn API, as plain types (the page bundles no schema
 * library). `test/ViewerWire.test.ts` holds them to `@sluice/core`'s and
 * `TurnSnapshot`'s schema types, so they cannot drift apart.
 */

export type JsonValue = null | boolean | number | string | ReadonlyArray<JsonValue> | {
  readonly [key: string]: JsonValue
}

/** A source a message cites (`OutputItem.Source`). */
export interface Source {
  readonly kind: "url" | "document"
  readonly url?: string
  readonly title?: string
  readonly cited_text?: string
  readonly document_index?: number
  readonly file_id?: string
  readonly filename?: string
  readonly location?: { readonly unit: "char" | "page" | "block"; readonly start: number; readonly end: number }
  readonly text_start?: number
  readonly text_end?: number
}

/** An item's full state so far (`UIUpsert`). */
export interface Upsert {
  readonly type: "item_upsert"
  readonly itemId: string
  readonly itemType: "message" | "reasoning" | "tool_call" | "tool_output" | "error" | "compaction" | "approval_request"
  readonly changeType: "created" | "updated" | "completed"
  readonly content: string
  readonly origin?: "user" | "agent" | "system"
  readonly providerId?: string
  readonly toolName?: string
  readonly toolArguments?: JsonValue
  readonly callId?: string
  readonly toolOutput?: JsonValue
  readonly success?: boolean
  readonly providerExecuted?: boolean
  readonly sources?: ReadonlyArray<Source>
  readonly serverLabel?: string
  readonly approvalRequestId?: string
  readonly errorCode?: string
  readonly errorMessage?: string
}

/** Token counts (`UITurnEventUsage`). */
export interface Usage {
  readonly promptTokens: number
  readonly completionTokens: number
  readonly totalTokens: number
  readonly inputTokens?: number
  readonly cacheReadTokens?: number
  readonly cacheWriteTokens?: number
  readonly reasoningTokens?: number
}

/** A turn event (`UITurnEvent`). */
export type TurnEvent =
  | { readonly type: "turn_started"; readonly modelId?: string; readonly providerId?: string }
  | {
    readonly type: "turn_completed"
    readonly status: "complete" | "error" | "aborted" | "cancelled"
    readonly usage?: Usage
  }
  | { readonly type: "turn_error"; readonly error: { readonly code: string; readonly message: string } }

/** `GET /v1/turns/:turnId` (`TurnSnapshot`). */
export interface Snapshot {
  readonly turnId: string
  readonly modelId?: string
  readonly providerId?: string
  readonly status: "streaming" | "complete" | "error" | "aborted" | "cancelled"
  readonly usage?: Usage
  readonly error?: { readonly code: string; readonly message: string }
  readonly items: ReadonlyArray<Upsert>
  readonly lastEventId: string
}

/** A turn of `GET /v1/turns` (`TurnSummary`). */
export interface TurnListEntry {
  readonly turnId: string
  readonly startedAt: number
  readonly providerId?: string
  readonly modelId?: string
  readonly status?: Snapshot["status"]
  readonly endedAt?: number
  readonly durationMs?: number
  readonly firstOutputMs?: number
}

/** `GET /v1/turns`. */
export interface TurnList {
  readonly turns: ReadonlyArray<TurnListEntry>
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

/** Whether a parsed `item_upsert` event looks like an upsert (what the page relies on). */
export const isUpsert = (value: unknown): value is Upsert =>
  isObject(value) && value["type"] === "item_upsert" && typeof value["itemId"] === "string" &&
  typeof value["itemType"] === "string" && typeof value["content"] === "string"

/** Whether a parsed `turn_event` event looks like a turn event. */
export const isTurnEvent = (value: unknown): value is TurnEvent =>
  isObject(value) &&
  (value["type"] === "turn_started" || value["type"] === "turn_completed" || value["type"] === "turn_error")

/** Whether a parsed snapshot body looks like a snapshot. */
export const isSnapshot = (value: unknown): value is Snapshot =>
  isObject(value) && typeof value["turnId"] === "string" && typeof value["status"] === "string" &&
  Array.isArray(value["items"]) && value["items"].every(isUpsert) && typeof value["lastEventId"] === "string"

/** Whether a parsed list body looks like the list of turns. */
export const isTurnList = (value: unknown): value is TurnList =>
  isObject(value) && Array.isArray(value["turns"]) &&
  value["turns"].every((turn) =>
    isObject(turn) && typeof turn["turnId"] === "string" && typeof turn["startedAt"] === "number"
  )
