/**
 * The turn viewer: the list of recent turns and, for the chosen turn, its items bound
 * by `itemId` from the upserts alone (a tool's output nested under its call, by
 * `callId`). A turn is loaded from its snapshot and, while it
 * streams, followed over SSE from the snapshot's `lastEventId`; the browser's
 * `EventSource` resumes a dropped stream with `Last-Event-ID`. Each upsert carries the
 * item's whole content, so an upsert replaces its item's rendering: no delta logic,
 * and an upsert seen twice changes nothing. A page whose token may cancel shows a stop
 * button on a running turn (`POST /v1/turns/:turnId/cancel`); the turn then ends
 * `cancelled` through its stream like any ending.
 */
import { ApiFailure, apiUrl, cancelTurn, listTurns, loadSnapshot, mayCancel, takeAccessToken } from "./api.js"
import { renderHead, renderItem, renderListEntry, type TurnHead } from "./render.js"
import { isTurnEvent, isUpsert, type TurnEvent, type TurnList, type Upsert } from "./wire.js"

const element = (id: string): HTMLElement => {
  const found = document.getElementById(id)
  if (found === null) throw new Error(`the page has no #${id}`)
  return found
}

const token = takeAccessToken()
const canStop = mayCancel(token)
const list = element("turn-list")
const items = element("items")
const notice = element("notice")
const connection = element("connection")

/** The turn on screen. */
interface Viewed {
  readonly turnId: string
  head: TurnHead
  readonly items: Map<string, HTMLElement>
  /** The elements of tool calls, by `callId`: where their outputs go. */
  readonly calls: Map<string, HTMLElement>
  source: EventSource | undefined
  stopping: boolean
}

let current: Viewed | undefined
let recent: TurnList["turns"] = []
// Until the reader picks a turn, the page shows the newest one and moves on to the
// next newest when it ends.
let following = true

const setConnection = (state: string, text: string) => {
  connection.dataset["state"] = state
  connection.textContent = text
}

const showNotice = (text: string | undefined) => {
  notice.hidden = text === undefined
  notice.textContent = text ?? ""
}

const describe = (error: unknown): string => {
  if (!(error instanceof ApiFailure)) return `The server cannot be reached (${String(error)}).`
  if (error.status === 401) {
    return token === undefined
      ? "This server needs a page token: open the link that sluice serve printed."
      : `Access refused: ${error.message}. Open a new link from sluice serve.`
  }
  return `${error.code}: ${error.message}`
}

const setHead = (turn: Viewed) => {
  const control = canStop ? { stopping: turn.stopping, stop: () => void stop(turn) } : undefined
  element("turn-head").replaceWith(renderHead(turn.head, control))
}

// Asks the server to cancel the turn; its stream then brings the ending (`cancelled`).
// A turn that had ended meanwhile (409) is loaded again to show how it ended.
async function stop(turn: Viewed) {
  if (turn.stopping) return
  turn.stopping = true
  setHead(turn)
  try {
    await cancelTurn(token, turn.turnId)
  } catch (error) {
    turn.stopping = false
    if (current !== turn) return
    if (error instanceof ApiFailure && error.status === 409) {
      void openTurn(turn.turnId)
      return
    }
    setHead(turn)
    showNotice(
      error instanceof ApiFailure && error.status === 403
        ? "This link may only read: it cannot stop turns."
        : describe(error)
    )
  }
}

// Where a new item goes: a tool's output under the call with its `callId`, when the
// page shows that call; anything else at the end of the turn.
const placeFor = (turn: Viewed, upsert: Upsert): HTMLElement => {
  if (upsert.itemType !== "tool_output" || upsert.callId === undefined) return items
  const call = turn.calls.get(upsert.callId)
  return call?.querySelector<HTMLElement>(":scope > .results") ?? items
}

// Only the item an upsert names is rendered again; the rest of the page stays.
const bind = (turn: Viewed, upsert: Upsert) => {
  if (current !== turn) return
  const previous = turn.items.get(upsert.itemId)
  const next = renderItem(upsert, previous)
  const scroller = document.scrollingElement
  const atBottom = scroller !== null && scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 48
  if (previous !== undefined) previous.replaceWith(next)
  else if (upsert.itemType === "message" && upsert.origin === "user") {
    // The input that started the turn comes first, whenever it was published.
    items.insertBefore(next, items.querySelector(":scope > .item:not(.origin-user)"))
  } else placeFor(turn, upsert).append(next)
  turn.items.set(upsert.itemId, next)
  if (upsert.itemType === "tool_call" && upsert.callId !== undefined) turn.calls.set(upsert.callId, next)
  if (atBottom && scroller !== null) scroller.scrollTop = scroller.scrollHeight
}

const applyTurnEvent = (turn: Viewed, event: TurnEvent) => {
  switch (event.type) {
    case "turn_started":
      turn.head = { ...turn.head, providerId: event.providerId, modelId: event.modelId }
      break
    case "turn_completed":
      turn.head = { ...turn.head, status: event.status, usage: event.usage }
      break
    case "turn_error":
      turn.head = { ...turn.head, status: "error", error: event.error }
      break
  }
  if (current === turn) setHead(turn)
}

const parse = (event: MessageEvent): unknown => {
  try {
    return JSON.parse(String(event.data))
  } catch {
    return undefined
  }
}

const follow = (turn: Viewed, after: string) => {
  const source = new EventSource(apiUrl(`/v1/turns/${encodeURIComponent(turn.turnId)}/upserts`, { after }, token))
  turn.source = source
  setConnection("connecting", "connecting…")
  source.onopen = () => {
    setConnection("live", "live")
    showNotice(undefined)
  }
  source.addEventListener("item_upsert", (event) => {
    const upsert = parse(event)
    if (isUpsert(upsert)) bind(turn, upsert)
  })
  source.addEventListener("turn_event", (event) => {
    const turnEvent = parse(event)
    if (!isTurnEvent(turnEvent)) return
    applyTurnEvent(turn, turnEvent)
    if (turnEvent.type === "turn_completed") {
      // The server closes the stream after the turn's last entry (a failed turn's
      // `turn_error` comes just before it): do not reconnect.
      source.close()
      if (current === turn) setConnection("finished", "finished")
      void refreshList()
    }
  })
  source.addEventListener("stream_error", () => {
    if (current === turn) showNotice("The server lost the turn's stream for a moment; resuming where it stopped…")
  })
  source.onerror = () => {
    if (current !== turn) return
    if (turn.head.status !== "streaming") {
      // a failed turn followed on from its `turn_error`: the server closed the stream
      // at its last entry, or at once when it had been read already; it has ended
      source.close()
      setConnection("finished", "finished")
      return
    }
    if (source.readyState === EventSource.CLOSED) {
      setConnection("error", "disconnected")
      showNotice("The stream was refused (the link may have expired): reload the page or open a new link.")
    } else {
      setConnection("reconnecting", "reconnecting…")
    }
  }
}

const openTurn = async (turnId: string) => {
  current?.source?.close()
  const turn: Viewed = {
    turnId,
    head: { turnId, status: "streaming" },
    items: new Map(),
    calls: new Map(),
    source: undefined,
    stopping: false
  }
  current = turn
  items.replaceChildren()
  setHead(turn)
  renderList()
  setConnection("loading", "loading…")
  try {
    const snapshot = await loadSnapshot(token, turnId)
    if (current !== turn) return
    showNotice(undefined)
    turn.head = {
      ...turn.head,
      turnId,
      providerId: snapshot.providerId,
      modelId: snapshot.modelId,
      status: snapshot.status,
      usage: snapshot.usage,
      error: snapshot.error
    }
    setHead(turn)
    for (const upsert of snapshot.items) bind(turn, upsert)
    // a failed turn's snapshot may stop at its `turn_error`, before the last entry and
    // its usage: follow on to it (the server closes at once when there is nothing left)
    if (snapshot.status === "streaming" || (snapshot.status === "error" && snapshot.usage === undefined)) {
      follow(turn, snapshot.lastEventId)
    } else setConnection("finished", "finished")
  } catch (error) {
    if (current !== turn) return
    setConnection("error", "not loaded")
    showNotice(describe(error))
  }
}

const renderList = () => {
  list.replaceChildren(...recent.map((turn) => renderListEntry(turn, turn.turnId === current?.turnId)))
  // The list knows how soon the turn on screen gave its first output and how long it took.
  const listed = recent.find((turn) => turn.turnId === current?.turnId)
  if (
    current !== undefined && listed !== undefined &&
    (listed.durationMs !== current.head.durationMs || listed.firstOutputMs !== current.head.firstOutputMs)
  ) {
    current.head = { ...current.head, firstOutputMs: listed.firstOutputMs, durationMs: listed.durationMs }
    setHead(current)
  }
}

const followNewest = () => {
  const newest = recent[0]
  if (newest === undefined || newest.turnId === current?.turnId) return
  if (current === undefined || current.head.status !== "streaming") void openTurn(newest.turnId)
}

async function refreshList() {
  try {
    recent = (await listTurns(token, 50)).turns
    renderList()
    if (following) followNewest()
  } catch (error) {
    showNotice(describe(error))
  }
}

const chosenTurn = (): string | undefined => new URLSearchParams(location.hash.slice(1)).get("turn") ?? undefined

window.addEventListener("hashchange", () => {
  const turnId = chosenTurn()
  if (turnId === undefined || turnId === current?.turnId) return
  following = false
  void openTurn(turnId)
})
element("refresh").addEventListener("click", () => void refreshList())

const initial = chosenTurn()
if (initial !== undefined) {
  following = false
  void openTurn(initial)
}
void refreshList()
// New turns show up in the list without a reload (browser code: there is no Effect
// runtime on the page, so this is the DOM's own timer).
setInterval(() => {
  if (document.visibilityState === "visible") void refreshList()
}, 5000)
