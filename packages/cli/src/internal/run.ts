/**
 * What `sluice run` runs, loaded when it runs: the provider's live client, the
 * terminal rendering of the answer, and the turn published like `replay` does.
 *
 * @internal
 */
import { Summary } from "@sluice/accumulator"
import type { OutputItem, StreamEvent } from "@sluice/core"
import { TurnSource } from "@sluice/pipeline"
import { LlmRequest, ProviderClient, ProviderHttp, type ProviderName, Providers } from "@sluice/providers"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { badUsage, type CliFailure } from "../CliFailure.js"
import type * as Run from "../commands/Run.js"
import * as Output from "../Output.js"
import * as Publishing from "../Publishing.js"

const dim = (text: string): string => `\x1b[2m${text}\x1b[22m`

/**
 * The terminal rendering of a turn's events: message and reasoning deltas as they
 * come (reasoning dimmed when `styled`), a line per finished tool call and tool
 * result, a line per error. Items are separated by a line break; `lineEnd` gives the
 * line break a rendering stopped mid-line needs (none at a line's start).
 */
export const makeRenderer = (styled: boolean) => {
  const types = new Map<string, OutputItem.ItemType>()
  let atLineStart = true
  let last: string | undefined
  const write = (text: string): string => {
    if (text !== "") atLineStart = text.endsWith("\n")
    return text
  }
  const line = (text: string): string => write(`${atLineStart ? "" : "\n"}${text}\n`)
  const render = (event: StreamEvent.StreamEvent): string => {
    const payload = event.payload
    switch (payload.type) {
      case "item_start":
        types.set(payload.item_id, payload.item_type)
        return ""
      case "item_delta": {
        const type = types.get(payload.item_id)
        if (type !== "message" && type !== "reasoning") return ""
        const separator = last !== undefined && last !== payload.item_id && !atLineStart ? "\n" : ""
        last = payload.item_id
        return write(separator + (type === "reasoning" && styled ? dim(payload.delta_content) : payload.delta_content))
      }
      case "item_done": {
        const item = payload.final_item
        const by = "provider_executed" in item && item.provider_executed === true ? " (run by the provider)" : ""
        if (item.type === "function_call") {
          return line(`-> tool call ${item.name}(${item.arguments}) [${item.call_id}]${by}`)
        }
        if (item.type === "function_call_output") return line(`<- tool result [${item.call_id}]${by} ${item.output}`)
        return ""
      }
      case "response_error":
        return line(`error: ${payload.error.type ?? "api_error"} ${payload.error.code}: ${payload.error.message}`)
      case "response_done":
        return atLineStart ? "" : write("\n")
      default:
        return ""
    }
  }
  // ends the line the answer left open (Ctrl-C mid-answer): the shell's prompt, or the
  // next line printed, starts a line of its own
  const lineEnd = (): string => (atLineStart ? "" : write("\n"))
  return Object.assign(render, { lineEnd })
}

const baseUrlOf = (value: Option.Option<string>): Effect.Effect<string | undefined, CliFailure> =>
  Option.match(value, {
    onNone: () => Effect.succeed(undefined),
    onSome: (url) => {
      const parsed = URL.canParse(url) ? new URL(url) : undefined
      return parsed !== undefined && (parsed.protocol === "http:" || parsed.protocol === "https:")
        ? Effect.succeed(url)
        : Effect.fail(badUsage(`--base-url must be an http(s) URL, got ${url}`))
    }
  })

const timeoutOf = (seconds: number): Effect.Effect<Duration.Duration, CliFailure> =>
  Number.isInteger(seconds) && seconds >= 1 && seconds <= 3600
    ? Effect.succeed(Duration.seconds(seconds))
    : Effect.fail(badUsage(`--timeout must be from 1 to 3600 seconds, got ${seconds}`))

const settingsOf = (provider: ProviderName.ProviderName, baseUrl: string | undefined) =>
  ProviderClient.config(provider, { baseUrl }).pipe(
    Effect.mapError(() => {
      const variable = Providers.apiKeyVariable(provider)
      return badUsage(
        `sluice run --provider ${provider} needs an API key: set ${variable} (several keys as a comma-separated list, rotated on retryable errors)`
      )
    })
  )

/** Runs `sluice run`. */
export const run = (args: Run.Args): Effect.Effect<void, CliFailure, Output.Output> =>
  Effect.gen(function*() {
    const context = yield* Publishing.contextOf(args.turn, args.thread, args)
    const settings = yield* settingsOf(args.provider, yield* baseUrlOf(args.baseUrl))
    const timeout = yield* timeoutOf(args.timeout)
    const client = yield* ProviderClient.make({ ...settings, responseTimeout: timeout, idleTimeout: timeout })
    const request = LlmRequest.prompt(
      args.model,
      args.prompt,
      Option.match(args.system, { onNone: () => ({}), onSome: (system) => ({ system }) })
    )
    const output = yield* Output.Output
    const render = makeRenderer(output.isTTY)
    const source = TurnSource.events((turn) => {
      const events = client.stream(request, {
        runId: turn.runId,
        turnId: turn.turnId,
        threadId: turn.threadId,
        traceContext: turn.traceContext
      })
      return args.json ? events : Stream.tap(events, (event) => Output.text(render(event)))
    })
    let messages = 0
    const turn = yield* Publishing.publish(context, source, () => Effect.sync(() => void messages++)).pipe(
      Effect.provide(Publishing.pipelineLayer(args.prefix)),
      Effect.ensuring(Effect.suspend(() => Output.text(render.lineEnd())))
    )
    if (args.json) yield* Output.line(JSON.stringify(Summary.fromTurn(turn)))
    else {yield* Publishing.report({
        turnId: context.turnId,
        threadId: context.threadId,
        prefix: args.prefix,
        messages,
        redisUrl: args.redisUrl,
        turn
      })}
    yield* Publishing.failIfFailed(turn)
  }).pipe(Effect.provide(Publishing.storeLayer(args.redisUrl)), Effect.provide(ProviderHttp.layer))
