/**
 * The hot path of Stream A encoding: the JSON of an `item_delta` StreamEvent, written
 * by hand. It checks exactly what the StreamEvent schema checks for such an event and
 * writes the same text its encoding gives (the schema's field order, no other
 * fields); anything it is not sure of is left to the schema. The tests hold it to the
 * schema's output on generated events.
 *
 * @internal
 */
import { Ids, type StreamEvent } from "@sluice/core"
import * as Predicate from "effect/Predicate"

const hasOwn = (value: object, key: string): boolean => Object.prototype.hasOwnProperty.call(value, key)

const isTimestamp = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 0

// The JSON of a trace context's known fields, or undefined when one is malformed.
const traceContextJson = (context: unknown): string | undefined => {
  if (!Predicate.isObject(context)) return undefined
  let json = "{"
  for (const key of ["traceparent", "tracestate"] as const) {
    if (!hasOwn(context, key)) continue
    const value = context[key]
    if (typeof value !== "string") return undefined
    json += `${json.length > 1 ? "," : ""}"${key}":${JSON.stringify(value)}`
  }
  return `${json}}`
}

/**
 * The schema's JSON of an `item_delta` event, or `undefined` for any other event, or
 * one that may not satisfy the schema.
 *
 * @internal
 */
export const itemDeltaJson = (event: StreamEvent.StreamEvent): string | undefined => checkedItemDelta(event)?.()

/**
 * An `item_delta` event checked now and its JSON made later, each time the returned
 * function is called (the same text `itemDeltaJson` gives); `undefined` for any other
 * event, or one that may not satisfy the schema. The function holds the event's parts,
 * not their JSON.
 *
 * @internal
 */
export const checkedItemDelta = (event: StreamEvent.StreamEvent): (() => string) | undefined => {
  const payload: unknown = event.payload
  if (event.type !== "item_delta" || !Predicate.isObject(payload)) return undefined
  const itemId = payload.item_id
  const content = payload.delta_content
  if (payload.type !== "item_delta" || typeof itemId !== "string" || typeof content !== "string") return undefined
  let kind = ""
  if (hasOwn(payload, "reasoning_kind")) {
    const value = payload.reasoning_kind
    if (value !== "summary" && value !== "raw") return undefined
    kind = `,"reasoning_kind":"${value}"`
  }
  const eventId: unknown = event.event_id
  const runId: unknown = event.run_id
  const timestamp: unknown = event.timestamp
  if (typeof eventId !== "string" || typeof runId !== "string" || !isTimestamp(timestamp)) return undefined
  if (!Ids.isUuid(eventId) || !Ids.isUuid(runId)) return undefined
  const traceContext = traceContextJson(event.trace_context)
  if (traceContext === undefined) return undefined
  // UUIDs are hex digits and dashes: quoted as they are
  return () =>
    `{"event_id":"${eventId}","timestamp":${timestamp},"trace_context":${traceContext},` +
    `"run_id":"${runId}","type":"item_delta","payload":{"type":"item_delta",` +
    `"item_id":${JSON.stringify(itemId)},"delta_content":${JSON.stringify(content)}${kind}}}`
}
