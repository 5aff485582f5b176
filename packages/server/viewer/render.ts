/**
 * DOM for turns and items. Every text from the API goes in through `textContent` or a
 * text node, never as markup; message and summary text is markdown, turned into
 * sanitized DOM by `markdown.ts`.
 */
import type { TurnListEntry, TurnStatus, Upsert, Usage } from "@sluice/client"
import { renderMarkdown } from "./markdown.js"

/** A source a message cites. */
type Source = NonNullable<Upsert["sources"]>[number]

/** A tool's arguments or output. */
type JsonValue = NonNullable<Upsert["toolArguments"] | Upsert["toolOutput"]>

type Child = Node | string | undefined

/** An element with classes and children (strings become text nodes). */
export const h = (tag: string, className: string, ...children: ReadonlyArray<Child>): HTMLElement => {
  const element = document.createElement(tag)
  if (className !== "") element.className = className
  for (const child of children) {
    if (child !== undefined) element.append(typeof child === "string" ? document.createTextNode(child) : child)
  }
  return element
}

/** A value as the page shows it: a string as it is, anything else as indented JSON. */
export const formatJson = (
  value: JsonValue
): string => (typeof value === "string" ? value : JSON.stringify(value, null, 2))

const roles = { user: "User", agent: "Assistant", system: "System" } as const

const stateBadge = (upsert: Upsert): Child =>
  upsert.changeType === "completed" ? undefined : h("span", "badge streaming", "streaming")

const label = (...children: ReadonlyArray<Child>) => h("header", "label", ...children)

/**
 * Markdown text as sanitized DOM; its source text stays in `data-text`. An upsert that
 * did not change the text (a message completing) reuses the previous rendering.
 */
const markdown = (text: string, previous: HTMLElement | undefined): HTMLElement => {
  const kept = previous?.querySelector<HTMLElement>(".content.markdown")
  if (kept !== null && kept !== undefined && kept.dataset["text"] === text) return kept
  const element = h("div", "content markdown", renderMarkdown(text))
  element.dataset["text"] = text
  return element
}

const body = (upsert: Upsert, previous: HTMLElement | undefined): ReadonlyArray<Node> => {
  switch (upsert.itemType) {
    case "message":
      return [
        label(roles[upsert.origin ?? "agent"], stateBadge(upsert)),
        markdown(upsert.content, previous),
        sources(upsert.sources)
      ].filter(
        (node): node is HTMLElement => node !== undefined
      )
    case "reasoning": {
      const details = h(
        "details",
        "",
        h(
          "summary",
          "label",
          `Reasoning${upsert.providerId === undefined ? "" : ` · ${upsert.providerId}`}`,
          stateBadge(upsert)
        ),
        h("div", "content", upsert.content)
      )
      // Collapsed until the reader opens it; an upsert keeps it as the reader left it.
      if (previous?.querySelector("details")?.open === true) details.setAttribute("open", "")
      return [details]
    }
    case "tool_call": {
      // The call's results nest under it (`main.ts` puts them there); a new state of
      // the call keeps them.
      const results = previous?.querySelector(":scope > .results") ?? h("div", "results")
      return [
        label(
          "Tool call ",
          h("code", "tool-name", upsert.toolName ?? "(unnamed)"),
          providerBadge(upsert),
          stateBadge(upsert),
          callId(upsert)
        ),
        h("pre", "args", formatJson(upsert.toolArguments ?? upsert.content)),
        results
      ]
    }
    case "tool_output": {
      const outcome = upsert.success === undefined ? undefined : upsert.success ? "succeeded" : "failed"
      return [
        label(
          "Tool output",
          outcome === undefined ? undefined : h("span", `badge ${outcome}`, outcome),
          providerBadge(upsert),
          stateBadge(upsert),
          callId(upsert)
        ),
        h("pre", "output", formatJson(upsert.toolOutput ?? upsert.content))
      ]
    }
    case "compaction":
      // the provider's summary of the conversation before this turn: collapsed, like reasoning
      return [
        h(
          "details",
          "",
          h(
            "summary",
            "label",
            `Conversation summary${upsert.providerId === undefined ? "" : ` · ${upsert.providerId}`}`,
            stateBadge(upsert)
          ),
          markdown(upsert.content, previous)
        )
      ]
    case "approval_request":
      // a question for the user (may the provider call this tool?), never a call to run
      return [
        label(
          "Approval requested ",
          h("code", "tool-name", upsert.toolName ?? "(unnamed)"),
          upsert.serverLabel === undefined ? undefined : h("span", "badge server-label", upsert.serverLabel),
          stateBadge(upsert)
        ),
        h("pre", "args", formatJson(upsert.toolArguments ?? upsert.content))
      ]
    case "error":
      return [
        label("Error ", h("code", "error-code", upsert.errorCode ?? "error"), stateBadge(upsert)),
        h("p", "error-message", upsert.errorMessage ?? ""),
        h("div", "content", upsert.content)
      ]
  }
}

/** Only web pages become links: any other scheme a provider might send stays text. */
const isWebUrl = (url: string): boolean => /^https?:\/\//i.test(url)

const sourceEntry = (source: Source): HTMLElement => {
  const name = source.title ?? source.filename ?? source.url ?? source.file_id ??
    `document ${source.document_index ?? ""}`.trim()
  let head: HTMLElement
  if (source.url !== undefined && isWebUrl(source.url)) {
    const link = h("a", "source-link", name)
    link.setAttribute("href", source.url)
    link.setAttribute("rel", "noopener noreferrer nofollow")
    link.setAttribute("target", "_blank")
    head = link
  } else {
    head = h("span", "source-name", name)
  }
  const where = source.location === undefined
    ? undefined
    : h("span", "source-where", ` ${source.location.unit} ${source.location.start}-${source.location.end}`)
  return h(
    "li",
    "source",
    head,
    where,
    source.cited_text === undefined ? undefined : h("q", "cited-text", source.cited_text)
  )
}

/** The sources a message cites, under its text. */
const sources = (list: ReadonlyArray<Source> | undefined): HTMLElement | undefined =>
  list === undefined || list.length === 0 ? undefined : h("ol", "sources", ...list.map(sourceEntry))

const callId = (
  upsert: Upsert
): Child => (upsert.callId === undefined ? undefined : h("span", "call-id", upsert.callId))

/** A tool the provider ran itself: shown as such, so nobody mistakes it for one to run. */
const providerBadge = (upsert: Upsert): Child =>
  upsert.providerExecuted === true ? h("span", "badge provider-executed", "run by provider") : undefined

/**
 * The element of an item in the state its upsert carries; `previous` is the element
 * it replaces (only the reader's own state, such as an opened reasoning, is kept).
 */
export const renderItem = (upsert: Upsert, previous: HTMLElement | undefined): HTMLElement => {
  const kind = upsert.itemType === "message"
    ? `message origin-${upsert.origin ?? "agent"}`
    : upsert.itemType.replace("_", "-")
  const element = h("article", `item ${kind}`, ...body(upsert, previous))
  element.dataset["itemId"] = upsert.itemId
  element.dataset["itemType"] = upsert.itemType
  element.dataset["changeType"] = upsert.changeType
  if (upsert.success !== undefined) element.dataset["success"] = String(upsert.success)
  if (upsert.providerExecuted === true) element.dataset["providerExecuted"] = "true"
  return element
}

/** What the head of a turn shows: its ids, provider and model, status, usage, error. */
export interface TurnHead {
  readonly turnId: string
  readonly providerId?: string | undefined
  readonly modelId?: string | undefined
  readonly status: TurnStatus
  readonly usage?: Usage | undefined
  readonly error?: { readonly code: string; readonly message: string } | undefined
  /** From the list of turns: the time from the turn's first entry to its first output and to its last entry. */
  readonly firstOutputMs?: number | undefined
  readonly durationMs?: number | undefined
}

/** Token counts: the breakdown when the turn carries it, else prompt and completion. */
export const usageText = (usage: Usage): string => {
  const parts = usage.inputTokens === undefined
    ? [`${usage.promptTokens} prompt`]
    : [
      `${usage.inputTokens} input`,
      `${usage.cacheReadTokens ?? 0} cache read`,
      `${usage.cacheWriteTokens ?? 0} cache write`
    ]
  parts.push(
    usage.reasoningTokens === undefined
      ? `${usage.completionTokens} output`
      : `${usage.completionTokens} output (${usage.reasoningTokens} reasoning)`,
    `${usage.totalTokens} total tokens`
  )
  return parts.join(" · ")
}

/** A span of milliseconds as people read it: `850 ms`, `3.4 s`, `2 min 5 s`. */
export const durationText = (ms: number): string =>
  ms < 1000
    ? `${Math.round(ms)} ms`
    : ms < 60_000
    ? `${(ms / 1000).toFixed(1)} s`
    : `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`

/**
 * The stop button of a running turn: `stop` is called on a click; `stopping` shows a
 * request on its way (the button is then disabled).
 */
export interface StopControl {
  readonly stopping: boolean
  readonly stop: () => void
}

const stopButton = (control: StopControl): HTMLElement => {
  const button = h("button", "stop", control.stopping ? "stopping…" : "Stop")
  button.id = "stop-turn"
  button.setAttribute("type", "button")
  button.title = "Cancel this turn: the provider request is aborted and the turn ends cancelled"
  if (control.stopping) button.setAttribute("disabled", "")
  button.addEventListener("click", () => control.stop())
  return button
}

/** The head of a turn; a running turn gets a stop button when `control` is given. */
export const renderHead = (head: TurnHead, control?: StopControl): HTMLElement => {
  const meta = [head.providerId, head.modelId].filter((part): part is string => part !== undefined).join(" · ")
  const status = h("span", `status status-${head.status}`, head.status)
  status.id = "turn-status"
  const element = h(
    "header",
    "",
    h("h2", "", "Turn ", h("code", "", head.turnId)),
    h(
      "p",
      "meta",
      status,
      meta === "" ? undefined : h("span", "provider", meta),
      head.usage === undefined ? undefined : h("span", "usage", usageText(head.usage)),
      head.firstOutputMs === undefined
        ? undefined
        : h("span", "first-output", `first output after ${durationText(head.firstOutputMs)}`),
      head.durationMs === undefined ? undefined : h("span", "duration", `took ${durationText(head.durationMs)}`),
      control === undefined || head.status !== "streaming" ? undefined : stopButton(control)
    ),
    head.error === undefined ? undefined : h("p", "turn-error", `${head.error.code}: ${head.error.message}`)
  )
  element.id = "turn-head"
  element.dataset["status"] = head.status
  return element
}

/**
 * An entry of the list of turns, a link to `#turn=<id>`: its start, id, status,
 * provider and model as far as the list knows them.
 */
export const renderListEntry = (turn: TurnListEntry, selected: boolean): HTMLElement => {
  const model = [turn.providerId, turn.modelId].filter((part): part is string => part !== undefined).join(" · ")
  const link = h(
    "a",
    selected ? "selected" : "",
    h(
      "span",
      "entry-head",
      h("time", "", new Date(turn.startedAt).toLocaleTimeString()),
      turn.status === undefined ? undefined : h("span", `status status-${turn.status}`, turn.status)
    ),
    h(
      "span",
      "entry-meta",
      h("code", "", turn.turnId.slice(0, 8)),
      model === "" ? undefined : h("span", "entry-model", model)
    )
  )
  if (turn.status !== undefined) link.dataset["status"] = turn.status
  link.setAttribute("href", `#turn=${encodeURIComponent(turn.turnId)}`)
  link.title = turn.turnId
  link.dataset["turnId"] = turn.turnId
  if (selected) link.setAttribute("aria-current", "true")
  return h("li", "", link)
}
