/**
 * The turns of threads `sluice serve` starts for `POST /v1/threads/:threadId/turns`
 * (docs/threads.md#http): the thread's messages sent with the provider's live client
 * (its API key and base URL from the environment, as for `POST /v1/turns`), run with
 * `TurnPipeline.start` under the ids the thread gave the turn, and ended in the thread
 * with the turn's final items whatever its ending.
 *
 * What a client may choose is the server's policy (`ThreadPolicy`, from `sluice serve
 * --thread-providers`, `--thread-models`, `--thread-tools`, `--thread-system`): the
 * first provider and the first model are the defaults; a provider, model or tool
 * outside them is 400 `invalid_request` naming the field.
 *
 * @since 0.3.0
 */
import { Ids } from "@sluice/core"
import { TurnContext, TurnPipeline, type TurnRequest, TurnSource } from "@sluice/pipeline"
import { type LlmRequest, type ProviderClient, ProviderName } from "@sluice/providers"
import { ApiError, type ThreadStarter } from "@sluice/server"
import { ThreadLog } from "@sluice/turns"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { codeOf } from "./TurnStarts.js"

/**
 * What clients of threads may choose: `providers` (the first is the default), `models`
 * (the first is the default; none: a request names its model, any), `tools` (the
 * definitions a request may name; each request gets those it names), and the `system`
 * prompt of every turn.
 *
 * @since 0.3.0
 * @category models
 */
export interface ThreadPolicy {
  readonly providers: ReadonlyArray<ProviderName.ProviderName>
  readonly models: ReadonlyArray<string>
  readonly tools: ReadonlyArray<LlmRequest.ToolDefinition>
  readonly system?: string | undefined
}

/**
 * The providers a thread may use when none are configured: all of them, Anthropic's
 * Messages API first.
 *
 * @since 0.3.0
 * @category constants
 */
export const defaultPolicy: ThreadPolicy = { providers: ProviderName.ProviderName.literals, models: [], tools: [] }

const refuse = (field: string, message: string) =>
  Effect.fail(new ApiError.ApiError({ code: "invalid_request", message, field }))

const isProvider = Schema.is(ProviderName.ProviderName)

/**
 * A client's choice checked against the policy, its defaults filled in.
 *
 * @since 0.3.0
 * @category checking
 */
export const check =
  (policy: ThreadPolicy) =>
  (choice: ThreadStarter.ThreadChoice): Effect.Effect<ThreadStarter.ThreadChoice, ApiError.ApiError> => {
    const provider = choice.provider ?? policy.providers[0]
    if (provider === undefined || !isProvider(provider) || !policy.providers.includes(provider)) {
      return refuse("provider", `provider: expected one of ${policy.providers.join(", ")}`)
    }
    const model = choice.model ?? policy.models[0]
    if (model === undefined) {
      return refuse("model", "model: this server has no default model: name one")
    }
    if (policy.models.length > 0 && !policy.models.includes(model)) {
      return refuse("model", `model: expected one of ${policy.models.join(", ")}`)
    }
    const known = new Set(policy.tools.map((tool) => tool.name))
    const names = choice.tools ?? []
    const unknown = names.findIndex((name) => !known.has(name))
    if (unknown >= 0) {
      return refuse(
        `tools[${unknown}]`,
        `tools[${unknown}]: ${JSON.stringify(names[unknown])} is not a tool of this server` +
          (known.size === 0 ? " (it has none)" : ` (${[...known].join(", ")})`)
      )
    }
    return Effect.succeed({ provider, model, ...(choice.tools === undefined ? {} : { tools: choice.tools }) })
  }

/**
 * A turn's end as its thread records it, from the run's exit: `completed` (the provider
 * ended it, `incomplete` included), `failed` (it ended with an error, or the run
 * failed), `cancelled` (asked to stop; `aborted` when the process shut down, with
 * that code), `producer_lost`; with the final items: `ThreadLog.endOf` of the turn, the
 * one mapping a thread also uses for a turn it finds ended in its streams.
 *
 * @since 0.3.0
 * @category conversions
 */
export const endOf = (
  exit: Exit.Exit<TurnPipeline.TurnResult, unknown>,
  provider: string
): ThreadLog.TurnEnd => {
  if (Exit.isFailure(exit)) {
    if (Cause.hasInterruptsOnly(exit.cause)) {
      return { status: "cancelled", provider, items: [], error: { code: "aborted", message: "the turn was stopped" } }
    }
    const failure = Cause.squash(exit.cause)
    return {
      status: "failed",
      provider,
      items: [],
      error: { code: "failed", message: failure instanceof Error ? failure.message : String(failure) }
    }
  }
  const { stopped, turn } = exit.value
  const end = ThreadLog.endOf(turn, provider)
  if (stopped._tag === "Some") {
    const { error: _error, ...common } = end
    return stopped.value === "aborted"
      ? {
        ...common,
        status: "cancelled",
        error: { code: "aborted", message: "the turn was stopped as the server shut down" }
      }
      : stopped.value === "producer_lost"
      ? end
      : { ...common, status: stopped.value }
  }
  return end
}

/**
 * The starter of threads' turns, on the `TurnPipeline` in context, with the clients
 * `clientFor` gives (`TurnStarts.clients`).
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = (
  policy: ThreadPolicy,
  clientFor: (
    provider: ProviderName.ProviderName
  ) => Effect.Effect<ProviderClient.Client, TurnRequest.ProviderUnavailable>
): Effect.Effect<ThreadStarter.ThreadStarterService, never, TurnPipeline.TurnPipeline> =>
  Effect.gen(function*() {
    const pipeline = yield* TurnPipeline.TurnPipeline
    const byName = new Map(policy.tools.map((tool) => [tool.name, tool]))
    return {
      check: check(policy),
      start: (turn) =>
        Effect.gen(function*() {
          const provider = turn.choice.provider
          const model = turn.choice.model
          if (provider === undefined || !isProvider(provider) || model === undefined) {
            return yield* refuse("provider", "provider and model: expected checked ones")
          }
          const tools = (turn.choice.tools ?? []).flatMap((name) => byName.get(name) ?? [])
          const request: LlmRequest.LlmRequest = {
            model,
            messages: turn.messages,
            ...(policy.system === undefined ? {} : { system: policy.system }),
            ...(tools.length === 0 ? {} : { tools })
          }
          const running = yield* Effect.gen(function*() {
            const client = yield* clientFor(provider)
            // a thread's id goes into the turn's events when it is a UUID (their schema's)
            const context = yield* TurnContext.make({
              turnId: turn.turnId,
              prefix: turn.prefix,
              ...(Ids.isUuid(turn.threadId) ? { threadId: turn.threadId } : {})
            })
            return yield* pipeline.start(
              context,
              TurnSource.events((started) =>
                client.stream(request, {
                  runId: started.runId,
                  turnId: started.turnId,
                  threadId: started.threadId,
                  traceContext: started.traceContext
                })
              ),
              { opening: { modelId: model, providerId: provider } }
            )
          }).pipe(
            Effect.mapError((error) => new ApiError.ApiError({ code: codeOf(error), message: error.message }))
          )
          return {
            turnId: running.context.turnId,
            events: running.events,
            ended: Effect.map(Effect.exit(running.result), (exit) => endOf(exit, provider))
          }
        })
    }
  })
