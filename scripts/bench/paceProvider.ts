/**
 * The provider stand-in of the live-pace bench, run as its own Node process (bundled
 * by `pace.ts` with esbuild, started with `node <bundle> <chunks per turn>`): a
 * loopback HTTP server (plain `node:http`) that answers each `POST
 * /v1/chat/completions` with an OpenAI Chat Completions SSE body of that many content
 * chunks, each due `PERIOD_MS` after the one before (the first `PERIOD_MS` after the
 * request arrived), then the finish reason, the usage and `[DONE]`.
 *
 * One timer for all bodies looks every `TICK_MS` for the chunks that are due and
 * writes each on its response's socket (one `write` per chunk, as a provider flushes
 * each event), and notes the time right after the write, on the machine's monotonic
 * clock (`monoNow`), which the measuring process reads alike. Nothing of it travels in
 * the body: the bytes are what a provider sends.
 *
 * The request names its turn in the prompt (`pace turn <index>`). `GET /log?turns=N`
 * answers, and then forgets, what was written so far: for each turn index below N,
 * the time its request arrived, then the write time of each content chunk (NaN for a
 * chunk never written), as little-endian float64s; with the number of requests and of
 * responses closed before their end in the `x-pace-requests` and `x-pace-aborted`
 * headers. On start it prints `{"port": <port>}` as one line on stdout.
 *
 * @internal
 */
import { createServer, type ServerResponse } from "node:http"
import { contentEvent, endEvents, monoNow, PERIOD_MS, roleEvent } from "./paceShared.js"

const CHUNKS = Number(process.argv[2] ?? 500)
const TICK_MS = 2

interface Body {
  readonly index: number
  readonly start: number
  readonly writes: Float64Array
  readonly res: ServerResponse
  next: number
}

const open = new Set<Body>()
/** Every turn's arrival and write times since the last `/log`, by turn index. */
let turns = new Map<number, { readonly start: number; readonly writes: Float64Array }>()
let requests = 0
let aborted = 0
let timer: ReturnType<typeof setInterval> | undefined

const tick = () => {
  const now = monoNow()
  for (const body of open) {
    while (body.next < CHUNKS && body.start + (body.next + 1) * PERIOD_MS <= now) {
      body.res.write(contentEvent(body.index, body.next))
      body.writes[body.next] = monoNow()
      body.next++
    }
    if (body.next < CHUNKS) continue
    body.res.end(endEvents(CHUNKS))
    close(body)
  }
}

const close = (body: Body) => {
  open.delete(body)
  if (open.size === 0 && timer !== undefined) {
    clearInterval(timer)
    timer = undefined
  }
}

const stream = (res: ServerResponse, text: string) => {
  const match = /pace turn (\d+)/.exec(text)
  if (match === null) {
    res.writeHead(400, { "content-type": "application/json" })
    res.end(
      JSON.stringify({ error: { message: "no `pace turn <index>` in the prompt", type: "invalid_request_error" } })
    )
    return
  }
  const index = Number(match[1])
  const body: Body = { index, start: monoNow(), writes: new Float64Array(CHUNKS).fill(NaN), res, next: 0 }
  turns.set(index, body)
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  res.write(roleEvent())
  res.on("close", () => {
    if (open.has(body)) {
      aborted++
      close(body)
    }
  })
  open.add(body)
  timer ??= setInterval(tick, TICK_MS)
}

const log = (res: ServerResponse, count: number) => {
  const out = new Float64Array(count * (CHUNKS + 1)).fill(NaN)
  for (const [index, turn] of turns) {
    if (index >= count) continue
    out[index * (CHUNKS + 1)] = turn.start
    out.set(turn.writes, index * (CHUNKS + 1) + 1)
  }
  res.writeHead(200, {
    "content-type": "application/octet-stream",
    "x-pace-requests": String(requests),
    "x-pace-aborted": String(aborted)
  })
  res.end(Buffer.from(out.buffer, out.byteOffset, out.byteLength))
  turns = new Map()
  requests = 0
  aborted = 0
}

const server = createServer({ noDelay: true, keepAliveTimeout: 60_000 }, (req, res) => {
  const url = new URL(req.url ?? "/", "http://localhost")
  if (req.method === "GET" && url.pathname === "/log") return log(res, Number(url.searchParams.get("turns") ?? 0))
  if (req.method !== "POST" || url.pathname !== "/v1/chat/completions") {
    res.writeHead(404)
    res.end()
    return
  }
  requests++
  let text = ""
  req.setEncoding("utf8")
  req.on("data", (part: string) => (text += part))
  req.on("end", () => stream(res, text))
})
server.maxConnections = 100_000
server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  process.stdout.write(`${JSON.stringify({ port })}\n`)
})
process.on("SIGTERM", () => {
  for (const body of open) body.res.destroy()
  server.close(() => process.exit(0))
})
