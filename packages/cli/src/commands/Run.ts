/**
 * `sluice run --provider P --model M [--system S] [--base-url U] [--json] PROMPT`: one
 * live turn, from the prompt to published upserts. The request goes to the provider
 * (retried with key rotation as `ProviderClient` does), the answer is printed as it
 * streams (reasoning dimmed on a terminal, tool calls shown), the turn is published
 * like `replay` does (Redis at `--redis-url`, else the embedded store), and the summary
 * ends the output. `--json` prints the summary only.
 *
 * Keys come from `OPENAI_API_KEY`, `ANTHROPIC_API_KEY` or `GEMINI_API_KEY` (several as a
 * comma-separated list, rotated in order); the base URL from `--base-url`, else
 * `OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL` or `GEMINI_BASE_URL`, else the provider's.
 * A missing key or a base URL that is not an http(s) URL is bad usage (exit code 2).
 * A turn the provider ended with an error prints its summary in full (`"status":
 * "error"`, the errors named) and exits 1. Retry notices are log lines, on standard
 * error.
 *
 * @since 0.1.0
 */
import { Args, Command, Options } from "@effect/cli"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Summary } from "@sluice/accumulator"
import type { OutputItem, StreamEvent } from "@sluice/core"
import { TurnSource } from "@sluice/pipeline"
import { LlmRequest, ProviderClient, ProviderRequest, type ProviderName } from "@sluice/providers"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { badUsage, type CliFailure } from "../CliFailure.js"
import * as EnvOptions from "../EnvOptions.js"
import * as Output from "../Output.js"
import * as Publishing from "../Publishing.js"
import * as Normalize from "./Normalize.js"

const dim = (text: string): string => `\x1b[2m${text}\x1b[22m`

/**
 * The terminal rendering of a turn's events: message and reasoning deltas as they
 * come (reasoning dimmed when `styled`), a line per finished tool call and tool
 * result, a line per error. Items are separated by a line break.
 *
 * @since 0.1.0
 * @category output
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
        if (item.type === "function_call") return line(`-> tool call ${item.name}(${item.arguments}) [${item.call_id}]${by}`)
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
  return render
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
      const variable = ProviderRequest.apiKeyVariable(provider)
      return badUsage(
        `sluice run --provider ${provider} needs an API key: set ${variable} (several keys as a comma-separated list, rotated on retryable errors)`
      )
    })
  )

/**
 * The `run` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "run",
  {
    provider: Normalize.providerOption("the wire API to call"),
    model: EnvOptions.requiredText("model", "SLUICE_MODEL", "the model id"),
    system: EnvOptions.optionalText("system", "SLUICE_SYSTEM", "the system prompt"),
    baseUrl: Options.text("base-url").pipe(
      Options.withDescription("the provider's base URL, as its SDK takes it (default: *_BASE_URL from the environment, else the provider's)"),
      Options.optional
    ),
    timeout: EnvOptions.integer(
      "timeout",
      "SLUICE_TIMEOUT",
      300,
      "seconds the provider may stay silent (no response, or no byte of the body) before the attempt is retried"
    ),
    json: Options.boolean("json").pipe(Options.withDescription("print the turn summary only")),
    turn: Publishing.turnOption,
    thread: Publishing.threadOption,
    prefix: Publishing.prefixOption,
    redisUrl: EnvOptions.redisUrl,
    prompt: Args.text({ name: "PROMPT" }).pipe(Args.withDescription("the user's message"))
  },
  (args) =>
    Effect.gen(function* () {
      const context = yield* Publishing.contextOf(args.turn, args.thread)
      const settings = yield* settingsOf(args.provider, yield* baseUrlOf(args.baseUrl))
      const timeout = yield* timeoutOf(args.timeout)
      const client = yield* ProviderClient.make({ ...settings, responseTimeout: timeout, idleTimeout: timeout })
      const request = LlmRequest.prompt(args.model, args.prompt, Option.match(args.system, { onNone: () => ({}), onSome: (system) => ({ system }) }))
      const output = yield* Output.Output
      const render = makeRenderer(output.isTTY)
      const source = TurnSource.events((turn) => {
        const events = client.stream(request, { runId: turn.runId, turnId: turn.turnId, threadId: turn.threadId, traceContext: turn.traceContext })
        return args.json ? events : Stream.tap(events, (event) => Output.text(render(event)))
      })
      let messages = 0
      const turn = yield* Publishing.publish(context, source, () => Effect.sync(() => void messages++)).pipe(
        Effect.provide(Publishing.pipelineLayer(args.prefix))
      )
      if (args.json) yield* Output.line(JSON.stringify(Summary.fromTurn(turn)))
      else yield* Publishing.report({ turnId: context.turnId, threadId: context.threadId, prefix: args.prefix, messages, redisUrl: args.redisUrl, turn })
      yield* Publishing.failIfFailed(turn)
    }).pipe(Effect.provide(Publishing.storeLayer(args.redisUrl)), Effect.provide(NodeHttpClient.layerUndici))
).pipe(Command.withDescription("call a provider with a prompt: print the answer as it streams, publish the turn, end with its summary"))
