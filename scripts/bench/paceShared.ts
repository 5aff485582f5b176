/**
 * What both sides of the live-pace bench share: the turn's content chunks (their text
 * and their OpenAI Chat Completions SSE bytes), the pace, and one clock both processes
 * read alike.
 *
 * @internal
 */
import { performance } from "node:perf_hooks"

/** Content chunks a second per turn. */
export const RATE = 50
/** The time between two content chunks of a turn, in milliseconds. */
export const PERIOD_MS = 1000 / RATE

const words = [
  "the",
  "stream",
  "of",
  "tokens",
  "arrives",
  "in",
  "small",
  "pieces,",
  "and",
  "Sluice",
  "turns",
  "each",
  "into",
  "events."
]

/** A chunk's text: a few characters (a word cut short) to a few words; never empty. */
export const pieceText = (turn: number, k: number): string => {
  const n = (turn * 31 + k * 17) % 10
  const word = words[(turn + k * 7) % words.length]!
  if (n < 3) return word.slice(0, 2 + (n % 3))
  let text = ` ${word}`
  for (let i = 1; i < n - 4; i++) text += ` ${words[(turn + k + i * 5) % words.length]}`
  return text
}

const base = { id: "chatcmpl-pace", object: "chat.completion.chunk", created: 1, model: "gpt-4o" }

/** One SSE event of an OpenAI Chat Completions stream, as text. */
export const sseText = (data: object): string => `data: ${JSON.stringify({ ...base, ...data })}\n\n`

/** The first event of a body: the assistant's role, no content. */
export const roleEvent = (): string =>
  sseText({ choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] })

/** The k-th content chunk of a turn. */
export const contentEvent = (turn: number, k: number): string =>
  sseText({ choices: [{ index: 0, delta: { content: pieceText(turn, k) }, finish_reason: null }] })

/** The end of a body of `chunks` content chunks: the finish reason, the usage, `[DONE]`. */
export const endEvents = (chunks: number): string =>
  sseText({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }) +
  sseText({
    choices: [],
    usage: { prompt_tokens: 100, completion_tokens: chunks, total_tokens: 100 + chunks }
  }) +
  "data: [DONE]\n\n"

/**
 * Milliseconds on the machine's monotonic clock (Linux `CLOCK_MONOTONIC`, which
 * `process.hrtime` and `performance.now` both read), so two processes on one machine
 * read the same time: `performance.now()` plus its origin on that clock, taken once.
 */
const origin = Number(process.hrtime.bigint()) / 1e6 - performance.now()
export const monoNow = (): number => origin + performance.now()
