/**
 * The turn viewer: the list of recent turns and, for the chosen turn, its items bound
 * by `itemId` from the upserts alone (a tool's output nested under its call, by
 * `callId`). Reading the API is `@sluice/client`'s: `followTurn` loads a turn's
 * snapshot and, while it streams, follows its feed from the snapshot's `lastEventId`,
 * resuming a dropped feed with `Last-Event-ID`; `listTurns` reads the list and `cancel`
 * stops a turn. This page only shows the state the client folds. Each upsert carries
 * the item's whole content, so an upsert replaces its item's rendering: no delta logic,
 * and only the items whose upsert changed are rendered again. A page whose token may
 * cancel shows a stop button on a running turn; the turn then ends `cancelled` through
 * its feed like any ending.
 */
import {
  cancel,
  ClientError,
  followTurn,
  listTurns,
  type TurnHandle,
  type TurnList,
  TurnState,
  type Upsert
} from "@sluice/client"
import { renderHead, renderItem, renderListEntry, type TurnHead } from "./render.js"

const element = (id: string): HTMLElement => {
  const found = document.getElementById(id)
  if (found === null) throw new Error(`the page has no #${id}`)
  return found
}

const storageKey = "sluice.access_token"

/**
 * The page token: `#access_token=` in the address the server printed, moved to
 * `sessionStorage` and out of the address bar (and so out of the history and of
 * anything the address is copied into). Undefined on a server without tokens.
 */
const takeAccessToken = (): string | undefined => {
  const fragment = new URLSearchParams(location.hash.slice(1))
  const given = fragment.get("access_token")
  if (given !== null) {
    sessionStorage.setItem(storageKey, given)
    fragment.delete("access_token")
    const rest = fragment.toString()
    history.replaceState(null, "", `${location.pathname}${location.search}${rest === "" ? "" : `#${rest}`}`)
    return given
  }
  return sessionStorage.getItem(storageKey) ?? undefined
}

/**
 * Whether the page may stop turns: its token is a page token of the `control` scope
 * (`v1.<expiresAt>.control.<mac>`; the scope is signed, not secret), or the server
 * needs no token (`insecure-local`). The server decides in the end: a refused request
 * is 403.
 */
const mayCancel = (token: string | undefined): boolean => token === undefined || token.split(".")[2] === "control"

const token = takeAccessToken()
const canStop = mayCancel(token)
// Every request goes to this page's server with the page token (in `?access_token=`).
const base = location.origin
const access = token === undefined ? {} : { accessToken: token }
// A page has one reader and no herd to spread: it waits at least half of each backoff
// (from 1 s), so a dropped feed shows as reconnecting rather than flickering.
const reconnect = { baseMs: 1000, maxMs: 30_000 }
const random = () => 0.5 + Math.random() / 2

const list = element("turn-list")
const items = element("items")
const notice = element("notice")
const connection = element("connection")

/** The turn on screen. */
interface Viewed {
  readonly turnId: string
  head: TurnHead
  /** Each item's element, and the upsert it shows. */
  readonly items: Map<string, HTMLElement>
  readonly shown: Map<string, Upsert>
  /** The elements of tool calls, by `callId`: where their outputs go. */
  readonly calls: Map<string, HTMLElement>
  handle: TurnHandle | undefined
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
  if (!(error instanceof ClientError)) return `The server cannot be reached (${String(error)}).`
  // "the server cannot be reached: <why>", as a sentence
  if (error.code === "network") return `${error.message.charAt(0).toUpperCase()}${error.message.slice(1)}.`
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

// Asks the server to cancel the turn; its feed then brings the ending (`cancelled`).
// A turn that had ended meanwhile (409) is loaded again to show how it ended.
async function stop(turn: Viewed) {
  if (turn.stopping) return
  turn.stopping = true
  setHead(turn)
  try {
    await cancel(base, turn.turnId, access)
  } catch (error) {
    turn.stopping = false
    if (current !== turn) return
    if (error instanceof ClientError && error.status === 409) {
      openTurn(turn.turnId)
      return
    }
    setHead(turn)
    showNotice(
      error instanceof ClientError && error.status === 403
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
  turn.shown.set(upsert.itemId, upsert)
  if (upsert.itemType === "tool_call" && upsert.callId !== undefined) turn.calls.set(upsert.callId, next)
  if (atBottom && scroller !== null) scroller.scrollTop = scroller.scrollHeight
}

// The head as the client's state tells it; rendered again only when it changed.
const showHead = (turn: Viewed, state: TurnState.TurnState) => {
  const { providerId, modelId, status, usage, error } = state
  const head = turn.head
  if (
    head.providerId === providerId && head.modelId === modelId && head.status === status && head.usage === usage &&
    head.error === error
  ) return
  turn.head = { ...head, providerId, modelId, status, usage, error }
  setHead(turn)
}

// How following goes, as the connection indicator and the notice show it.
const showConnection = (state: TurnState.TurnState, fedFrom: string | undefined) => {
  switch (state.connection) {
    case "loading":
      // the snapshot is in, and the turn goes on: its feed is being opened
      if (state.lastEventId !== undefined && !TurnState.isEnded(state)) setConnection("connecting", "connecting…")
      break
    case "live":
      setConnection("live", "live")
      showNotice(undefined)
      break
    case "reconnecting":
      setConnection("reconnecting", "reconnecting…")
      if (state.lastError?.code === "stream_error") {
        showNotice("The server lost the turn's stream for a moment; resuming where it stopped…")
      } else if (state.lastEventId === undefined && state.lastError !== undefined) {
        showNotice(describe(state.lastError))
      }
      break
    case "finished":
      setConnection("finished", "finished")
      // the turn ended while the page followed it: the list shows how it ended
      if (fedFrom !== undefined && state.lastEventId !== fedFrom) void refreshList()
      break
    case "failed":
      if (state.lastEventId === undefined) {
        setConnection("error", "not loaded")
        showNotice(describe(state.lastError))
      } else {
        setConnection("error", "disconnected")
        showNotice("The stream was refused (the link may have expired): reload the page or open a new link.")
      }
      break
    case "closed":
      break
  }
}

function openTurn(turnId: string) {
  current?.handle?.close()
  const turn: Viewed = {
    turnId,
    head: { turnId, status: "streaming" },
    items: new Map(),
    shown: new Map(),
    calls: new Map(),
    handle: undefined,
    stopping: false
  }
  current = turn
  items.replaceChildren()
  setHead(turn)
  renderList()
  setConnection("loading", "loading…")
  const handle = followTurn(base, turnId, { ...access, reconnect, random })
  turn.handle = handle
  let last = handle.getSnapshot()
  // The snapshot's `lastEventId`: where the feed started.
  let fedFrom: string | undefined
  handle.subscribe(() => {
    const state = handle.getSnapshot()
    const before = last
    last = state
    if (current !== turn) return handle.close()
    if (before.lastEventId === undefined && state.lastEventId !== undefined) {
      fedFrom = state.lastEventId
      showNotice(undefined)
    }
    showHead(turn, state)
    for (const upsert of state.items) {
      if (turn.shown.get(upsert.itemId) !== upsert) bind(turn, upsert)
    }
    if (state.connection !== before.connection || state.lastEventId !== before.lastEventId) {
      showConnection(state, fedFrom)
    }
  })
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
  if (current === undefined || current.head.status !== "streaming") openTurn(newest.turnId)
}

async function refreshList() {
  try {
    recent = (await listTurns(base, { ...access, limit: 50 })).turns
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
  openTurn(turnId)
})
element("refresh").addEventListener("click", () => void refreshList())

const initial = chosenTurn()
if (initial !== undefined) {
  following = false
  openTurn(initial)
}
void refreshList()
// New turns show up in the list without a reload (browser code: there is no Effect
// runtime on the page, so this is the DOM's own timer).
setInterval(() => {
  if (document.visibilityState === "visible") void refreshList()
}, 5000)
