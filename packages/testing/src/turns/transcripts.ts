/**
 * Turns to publish in tests: Stream B messages and Stream A events with known content.
 */
import { StreamBMessage, StreamEvent, type UITurnEvent, type UIUpsert } from "@sluice/core"
import { randomUUID } from "node:crypto"

/**
 * The upsert of agent message `itemId` of a turn, with `content`.
 *
 * @since 0.3.0
 */
export const messageUpsert = (
  turnId: string,
  threadId: string,
  itemId: string,
  content: string,
  changeType: UIUpsert.UIUpsertChangeType = "updated"
): UIUpsert.UIUpsert => ({
  type: "item_upsert",
  turnId,
  threadId,
  itemId,
  itemType: "message",
  changeType,
  content,
  origin: "agent"
})

/**
 * A turn's Stream B: turn_started, `n - 2` growing message upserts, turn_completed.
 *
 * @since 0.3.0
 */
export const upsertMessages = (turnId: string, n: number): Array<StreamBMessage.StreamBMessage> => {
  const threadId = randomUUID()
  const out: Array<StreamBMessage.StreamBMessage> = []
  const started: UITurnEvent.UITurnEvent = { type: "turn_started", turnId, threadId, providerId: "test" }
  out.push(StreamBMessage.wrap(started, randomUUID(), 1_700_000_000_000))
  let content = ""
  for (let i = 1; i <= n - 2; i++) {
    content += `word ${i} `
    const upsert = messageUpsert(
      turnId,
      threadId,
      "item-1",
      content,
      i === 1 ? "created" : i === n - 2 ? "completed" : "updated"
    )
    out.push(StreamBMessage.wrap(upsert, randomUUID(), 1_700_000_000_000 + i))
  }
  const completed: UITurnEvent.UITurnEvent = { type: "turn_completed", turnId, threadId, status: "complete" }
  out.push(StreamBMessage.wrap(completed, randomUUID(), 1_700_000_000_000 + n))
  return out
}

/**
 * A turn's Stream A: response_start, item_start, `n - 3` deltas, response_done.
 *
 * @since 0.3.0
 */
export const streamEvents = (turnId: string, n: number): Array<StreamEvent.StreamEvent> => {
  const context = { runId: randomUUID() }
  const at = (i: number) => 1_700_000_000_000 + i
  const out: Array<StreamEvent.StreamEvent> = [
    StreamEvent.envelope(
      context,
      {
        type: "response_start",
        response_id: context.runId,
        turn_id: turnId,
        thread_id: randomUUID(),
        model_id: "model",
        provider_id: "test",
        created_at: at(0)
      },
      randomUUID(),
      at(0)
    ),
    StreamEvent.envelope(context, { type: "item_start", item_id: "item-1", item_type: "message" }, randomUUID(), at(1))
  ]
  for (let i = 2; i < n - 1; i++) {
    out.push(
      StreamEvent.envelope(
        context,
        { type: "item_delta", item_id: "item-1", delta_content: `d${i} ` },
        randomUUID(),
        at(i)
      )
    )
  }
  out.push(StreamEvent.envelope(
    context,
    {
      type: "response_done",
      response_id: context.runId,
      status: "complete",
      finish_reason: "stop"
    },
    randomUUID(),
    at(n)
  ))
  return out
}

/**
 * What Stream B keeps of `messages` published from `0-1` on: every turn event and the
 * last upsert of each item, with their ids.
 *
 * @since 0.3.0
 */
export const kept = (
  messages: ReadonlyArray<StreamBMessage.StreamBMessage>
): Array<{ readonly id: string; readonly message: StreamBMessage.StreamBMessage }> => {
  const itemOf = (message: StreamBMessage.StreamBMessage): string | undefined => {
    const payload: unknown = JSON.parse(message.payload)
    return typeof payload === "object" && payload !== null && "itemId" in payload &&
        typeof payload.itemId === "string" &&
        message.payloadType === "item_upsert"
      ? payload.itemId
      : undefined
  }
  const last = new Map<string, number>()
  messages.forEach((message, i) => {
    const item = itemOf(message)
    if (item !== undefined) last.set(item, i)
  })
  return messages.flatMap((message, i) => {
    const item = itemOf(message)
    return item === undefined || last.get(item) === i ? [{ id: `0-${i + 1}`, message }] : []
  })
}

/**
 * Whether a live reader's `followed` messages fit Stream B's rule for `messages`: in
 * the order written, each as written, none twice, every one Stream B keeps among them
 * (a reader behind the writer may miss an upsert superseded and deleted before it read
 * it, never a kept one). Returns what is wrong, or `undefined`.
 *
 * @since 0.3.0
 */
export const followedWrongly = (
  followed: ReadonlyArray<StreamBMessage.StreamBMessage>,
  messages: ReadonlyArray<StreamBMessage.StreamBMessage>
): string | undefined => {
  const position = new Map(messages.map((message, i) => [message.eventId, i]))
  let previous = -1
  for (const message of followed) {
    const at = position.get(message.eventId)
    if (at === undefined) return `message ${message.eventId} was never written`
    if (at <= previous) return `message ${message.eventId} out of order or repeated`
    if (JSON.stringify(message) !== JSON.stringify(messages[at])) return `message ${message.eventId} changed`
    previous = at
  }
  const seen = new Set(followed.map((message) => message.eventId))
  const missing = kept(messages).find(({ message }) => !seen.has(message.eventId))
  return missing === undefined ? undefined : `kept message ${missing.message.eventId} (${missing.id}) not followed`
}
