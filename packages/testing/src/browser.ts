/**
 * The viewer tests' browser and network: Debian's Chromium driven by playwright-core
 * with a fresh profile, a TCP proxy between the page and the server that can cut every
 * connection, and what the page shows, read from its DOM.
 */
import type { UIUpsert } from "@sluice/core"
import type { TurnSnapshot } from "@sluice/server/TurnSnapshot"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { build } from "esbuild"
import { existsSync } from "node:fs"
import { mkdir, mkdtemp, rm } from "node:fs/promises"
import { type AddressInfo, connect, createServer, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type BrowserContext, chromium, type Page } from "playwright-core"

/**
 * Where the tests find Chromium.
 *
 * @since 0.3.0
 */
export const chromiumPath = "/usr/bin/chromium"

/**
 * Why the browser tests cannot run here, if they cannot (never under `CI`).
 *
 * @since 0.3.0
 */
export const unavailable: string | undefined = existsSync(chromiumPath) || process.env["CI"] !== undefined
  ? undefined
  : `${chromiumPath} is missing: install Debian's chromium (apt-get install chromium) to run the viewer tests; under CI=true this is a failure`

/**
 * Where screenshots of the pages go (`test-artifacts/viewer/`).
 *
 * @since 0.3.0
 */
export const artifactsDir = fileURLToPath(new URL("../../../test-artifacts/viewer/", import.meta.url))

/**
 * A headless Chromium's context, for the length of a layer.
 *
 * @since 0.3.0
 */
export class Browser extends Context.Service<Browser, BrowserContext>()("test/Browser") {}

/**
 * Chromium with a fresh profile in a temporary directory, removed afterwards.
 *
 * @since 0.3.0
 */
export const browserLayer: Layer.Layer<Browser, Error> = Layer.effect(
  Browser,
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        if (!existsSync(chromiumPath)) {
          throw new Error(`${chromiumPath} is missing: .ci/run installs Debian's chromium (apt-get install chromium)`)
        }
        const profile = await mkdtemp(join(tmpdir(), "sluice-viewer-"))
        const context = await chromium.launchPersistentContext(profile, {
          executablePath: chromiumPath,
          args: [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-quic",
            "--no-first-run",
            "--disable-component-update",
            "--disable-sync"
          ],
          viewport: { width: 1180, height: 980 }
        })
        return { context, profile }
      },
      catch: (cause) => new Error(`cannot launch ${chromiumPath}: ${String(cause)}`)
    }),
    ({ context, profile }) =>
      Effect.promise(async () => {
        await context.close()
        await rm(profile, { recursive: true, force: true })
      })
  ).pipe(Effect.map(({ context }) => context))
)

/**
 * A fresh page that records the page's uncaught errors; closed with the scope.
 *
 * @since 0.3.0
 */
export const newPage: Effect.Effect<
  { readonly page: Page; readonly errors: Array<string> },
  never,
  Browser | Scope.Scope
> = Browser.use((context) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const page = await context.newPage()
      const errors: Array<string> = []
      page.on("pageerror", (error) => errors.push(error.message))
      return { page, errors }
    }),
    ({ page }) => Effect.promise(() => page.close())
  )
)

/**
 * Runs a browser action as an Effect.
 *
 * @since 0.3.0
 */
export const run = <A>(action: () => Promise<A>): Effect.Effect<A, Error> =>
  Effect.tryPromise({ try: action, catch: (cause) => (cause instanceof Error ? cause : new Error(String(cause))) })

/**
 * Saves a screenshot of the page under `test-artifacts/viewer/`; its path.
 *
 * @since 0.3.0
 */
export const screenshot = (page: Page, name: string): Effect.Effect<string, Error> =>
  run(async () => {
    await mkdir(artifactsDir, { recursive: true })
    const path = join(artifactsDir, `${name}.png`)
    // From the top: the page follows a turn to its end, and the sticky list with it.
    await page.evaluate("window.scrollTo(0, 0)")
    await page.screenshot({ path, fullPage: true })
    return path
  })

/**
 * A TCP proxy in front of a server, whose connections a test can cut.
 *
 * @since 0.3.0
 */
export interface Proxy {
  /** The proxy's base URL. */
  readonly url: string
  /** Closes every connection open through the proxy, both ways; how many. */
  readonly cut: Effect.Effect<number>
  /** The request heads that went through, in order. */
  readonly requests: () => ReadonlyArray<string>
}

/**
 * A TCP proxy on loopback to `target` (`http://127.0.0.1:<port>`).
 *
 * @since 0.3.0
 */
export const proxy = (target: string): Effect.Effect<Proxy, Error, Scope.Scope> =>
  Effect.gen(function*() {
    const port = Number(new URL(target).port)
    const sockets = new Set<Socket>()
    const heads: Array<string> = []
    const server = createServer((client) => {
      const upstream = connect(port, "127.0.0.1")
      for (const socket of [client, upstream]) {
        sockets.add(socket)
        socket.on("close", () => sockets.delete(socket))
        socket.on("error", () => socket.destroy())
      }
      client.on("data", (chunk: Buffer) => {
        const text = chunk.toString("latin1")
        if (/^[A-Z]+ \S+ HTTP\/1\.1\r\n/.test(text)) heads.push(text.split("\r\n\r\n")[0]!)
      })
      client.pipe(upstream)
      upstream.pipe(client)
    })
    const address = yield* Effect.acquireRelease(
      Effect.callback<AddressInfo, Error>((resume) => {
        server.once("error", (error) => resume(Effect.fail(error)))
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server.address() as AddressInfo)))
      }),
      () =>
        Effect.callback<void>((resume) => {
          for (const socket of sockets) socket.destroy()
          server.close(() => resume(Effect.void))
        })
    )
    return {
      url: `http://127.0.0.1:${address.port}`,
      cut: Effect.sync(() => {
        const open = sockets.size
        for (const socket of sockets) socket.destroy()
        return open
      }),
      requests: () => [...heads]
    }
  })

/**
 * What the page shows of an item.
 *
 * @since 0.3.0
 */
export interface RenderedItem {
  readonly itemId: string
  readonly itemType: string
  readonly changeType: string
  readonly success: string | null
  readonly content: string | null
  readonly toolName: string | null
  readonly args: string | null
  readonly output: string | null
  readonly errorCode: string | null
  readonly errorMessage: string | null
  readonly providerExecuted: string | null
  readonly sources: ReadonlyArray<RenderedSource> | null
  /** The tool call this item is nested under (a tool output with its call on the page). */
  readonly parentCall: string | null
}

/**
 * A source as a message shows it: its name, its link (web pages only), the cited text.
 *
 * @since 0.3.0
 */
export interface RenderedSource {
  readonly name: string | null
  readonly href: string | null
  readonly cited: string | null
}

/**
 * What the page shows of the turn: its head and its items, in order.
 *
 * @since 0.3.0
 */
export interface RenderedTurn {
  readonly status: string | null
  readonly provider: string | null
  readonly usage: string | null
  readonly items: ReadonlyArray<RenderedItem>
}

// Evaluated in the page (the test's TypeScript has no DOM types).
const readTurn = `(() => {
  // An item's own element, not one of an item nested in it (a call's outputs).
  const own = (root, selector) => root.classList.contains("item")
    ? [...root.querySelectorAll(selector)].find((found) => found.closest(".item") === root) ?? null
    : root.querySelector(selector)
  const text = (root, selector) => own(root, selector)?.textContent ?? null
  const head = document.getElementById("turn-head")
  return {
    status: head?.dataset.status ?? null,
    provider: head === null ? null : text(head, ".provider"),
    usage: head === null ? null : text(head, ".usage"),
    items: [...document.querySelectorAll("#items .item")].map((item) => ({
      itemId: item.dataset.itemId,
      itemType: item.dataset.itemType,
      changeType: item.dataset.changeType,
      success: item.dataset.success ?? null,
      content: own(item, ".content")?.dataset.text ?? text(item, ".content"),
      parentCall: item.parentElement?.closest(".item")?.dataset.itemId ?? null,
      toolName: text(item, ".tool-name"),
      args: text(item, ".args"),
      output: text(item, ".output"),
      errorCode: text(item, ".error-code"),
      errorMessage: text(item, ".error-message"),
      providerExecuted: item.dataset.providerExecuted ?? null,
      sources: own(item, ".sources") === null ? null : [...item.querySelectorAll(".sources > .source")].map((li) => ({
        name: text(li, ".source-link, .source-name"),
        href: li.querySelector("a")?.getAttribute("href") ?? null,
        cited: text(li, ".cited-text")
      }))
    }))
  }
})()`

/**
 * What the page shows now.
 *
 * @since 0.3.0
 */
export const rendered = (page: Page): Effect.Effect<RenderedTurn, Error> =>
  run(() => page.evaluate<RenderedTurn>(readTurn))

const formatted = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value, null, 2))

/**
 * What the page must show of an item for its latest upsert; `parentCall` is the item
 * id of the call it nests under, if any.
 *
 * @since 0.3.0
 */
export const expectedItem = (upsert: UIUpsert.UIUpsert, parentCall: string | null = null): RenderedItem => ({
  parentCall,
  itemId: upsert.itemId,
  itemType: upsert.itemType,
  changeType: upsert.changeType,
  success: upsert.success === undefined ? null : String(upsert.success),
  content: ["message", "reasoning", "error", "compaction"].includes(upsert.itemType) ? upsert.content : null,
  toolName: upsert.itemType === "tool_call" ? upsert.toolName ?? "(unnamed)" : null,
  args: upsert.itemType === "tool_call" ? formatted(upsert.toolArguments ?? upsert.content) : null,
  output: upsert.itemType === "tool_output" ? formatted(upsert.toolOutput ?? upsert.content) : null,
  errorCode: upsert.itemType === "error" ? upsert.errorCode ?? "error" : null,
  errorMessage: upsert.itemType === "error" ? upsert.errorMessage ?? "" : null,
  providerExecuted: upsert.providerExecuted === true ? "true" : null,
  sources: upsert.sources === undefined || upsert.sources.length === 0
    ? null
    : upsert.sources.map((source) => ({
      name: source.title ?? source.filename ?? source.url ?? source.file_id ??
        `document ${source.document_index ?? ""}`.trim(),
      href: source.url !== undefined && /^https?:\/\//i.test(source.url) ? source.url : null,
      cited: source.cited_text ?? null
    }))
})

/**
 * The usage line of a turn's head: the breakdown when the turn carries it.
 *
 * @since 0.3.0
 */
export const expectedUsage = (usage: NonNullable<TurnSnapshot["usage"]>): string =>
  [
    ...(usage.inputTokens === undefined
      ? [`${usage.promptTokens} prompt`]
      : [
        `${usage.inputTokens} input`,
        `${usage.cacheReadTokens ?? 0} cache read`,
        `${usage.cacheWriteTokens ?? 0} cache write`
      ]),
    usage.reasoningTokens === undefined
      ? `${usage.completionTokens} output`
      : `${usage.completionTokens} output (${usage.reasoningTokens} reasoning)`,
    `${usage.totalTokens} total tokens`
  ].join(" · ")

/**
 * The items of a snapshot in the page's document order: user messages first, then the
 * others, each tool output that has its call on the page right after that call (and
 * the call's earlier outputs).
 */
const inPageOrder = (snapshotItems: ReadonlyArray<UIUpsert.UIUpsert>): ReadonlyArray<RenderedItem> => {
  const isUser = (upsert: UIUpsert.UIUpsert) => upsert.itemType === "message" && upsert.origin === "user"
  const items = [...snapshotItems.filter(isUser), ...snapshotItems.filter((upsert) => !isUser(upsert))]
  const calls = new Map<string, string>()
  const nested = new Map<string, Array<RenderedItem>>()
  const top: Array<{ readonly item: RenderedItem; readonly outputs: Array<RenderedItem> }> = []
  for (const upsert of items) {
    const call = upsert.itemType === "tool_output" && upsert.callId !== undefined ? calls.get(upsert.callId) : undefined
    if (call !== undefined) {
      nested.get(call)!.push(expectedItem(upsert, call))
      continue
    }
    const outputs: Array<RenderedItem> = []
    if (upsert.itemType === "tool_call" && upsert.callId !== undefined) {
      calls.set(upsert.callId, upsert.itemId)
      nested.set(upsert.itemId, outputs)
    }
    top.push({ item: expectedItem(upsert), outputs })
  }
  return top.flatMap(({ item, outputs }) => [item, ...outputs])
}

/**
 * What the page must show for a snapshot.
 *
 * @since 0.3.0
 */
export const expectedTurn = (snapshot: TurnSnapshot): RenderedTurn => ({
  status: snapshot.status,
  provider: [snapshot.providerId, snapshot.modelId].filter((part) => part !== undefined).join(" · ") || null,
  usage: snapshot.usage === undefined ? null : expectedUsage(snapshot.usage),
  items: inPageOrder(snapshot.items)
})

/**
 * Waits until the page's turn has this status.
 *
 * @since 0.3.0
 */
export const statusIs = (page: Page, status: string): Effect.Effect<void, Error> =>
  run(() => page.waitForSelector(`#turn-head[data-status="${status}"]`, { timeout: 30_000 })).pipe(Effect.asVoid)

/**
 * Waits until the item shows this content. A MutationObserver in the page, not a
 * predicate playwright would `eval` there (the page's CSP forbids that).
 *
 * @since 0.3.0
 */
export const contentIs = (page: Page, itemId: string, content: string): Effect.Effect<void, Error> => {
  const selector = JSON.stringify(`#items .item[data-item-id="${itemId}"] .content`)
  const expression = `new Promise((resolve) => {
    const shown = () => {
      const element = document.querySelector(${selector})
      return (element?.dataset.text ?? element?.textContent) === ${JSON.stringify(content)}
    }
    if (shown()) return resolve(true)
    const observer = new MutationObserver(() => {
      if (shown()) {
        observer.disconnect()
        resolve(true)
      }
    })
    observer.observe(document.body, { subtree: true, childList: true, characterData: true })
  })`
  return run(() => page.evaluate(expression)).pipe(
    Effect.timeoutOrElse({
      duration: "30 seconds",
      orElse: () => Effect.fail(new Error(`${itemId} never showed ${JSON.stringify(content)}`))
    }),
    Effect.asVoid
  )
}

/**
 * Waits until the page's connection indicator is in this state.
 *
 * @since 0.3.0
 */
export const connectionIs = (page: Page, state: string): Effect.Effect<void, Error> =>
  run(() => page.waitForSelector(`#connection[data-state="${state}"]`, { timeout: 30_000 })).pipe(Effect.asVoid)

/**
 * A page's script bundled by esbuild from `source` (resolved from `resolveDir`, the
 * workspace packages from their sources as the tests see them): one minified IIFE,
 * `globalName` set when the page reads the bundle's exports.
 *
 * @since 0.3.0
 */
export const bundleApp = (options: {
  readonly source: string
  readonly resolveDir: string
  readonly sourcefile: string
  readonly globalName?: string
}): Effect.Effect<string, Error> =>
  run(async () => {
    const result = await build({
      stdin: { contents: options.source, resolveDir: options.resolveDir, sourcefile: options.sourcefile, loader: "js" },
      conditions: ["@sluice/source"],
      bundle: true,
      write: false,
      minify: true,
      format: "iife",
      ...(options.globalName === undefined ? {} : { globalName: options.globalName }),
      platform: "browser",
      target: ["es2022"],
      define: { "process.env.NODE_ENV": "\"production\"" },
      logLevel: "silent"
    })
    const file = result.outputFiles[0]
    if (file === undefined) throw new Error(`esbuild produced nothing for ${options.sourcefile}`)
    return file.text
  })
