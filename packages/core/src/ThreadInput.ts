/**
 * What a client sends to start the next turn of a thread (docs/threads.md): only what
 * is new. The user's message (an AI SDK `UIMessage` of role `user`, or OpenAI-style
 * `{ role: "user", content }`), the results of the tool calls the client ran for the
 * turn before, the answers to its approval requests, and the model, provider and tools
 * to use, within what the server allows. The server builds the provider request from
 * the thread's history and this.
 *
 * `decodeTurnRequest` reads a request body and fails with a `ThreadInputError` that
 * names the first bad field in a sentence, ready to be a documented JSON error.
 *
 * @since 0.3.0
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as SchemaParser from "effect/SchemaParser"
import * as Json from "./Json.js"
import { isThreadId, threadIdRule } from "./ThreadId.js"
import * as UIMessage from "./UIMessage.js"

const optional = <S extends Schema.Constraint>(schema: S) => Schema.optionalKey(schema)

/**
 * The most tool results, or approval answers, one turn request carries.
 *
 * @since 0.3.0
 * @category constants
 */
export const maxResults = 128

/**
 * The thread-id rule and a thread token's expiry (their home is `ThreadId`, which has no
 * dependency, for the browser client).
 *
 * @since 0.3.0
 */
export { isThreadId, maxThreadIdLength, threadIdRule, threadTokenExpiresAt } from "./ThreadId.js"

/**
 * A thread id as a schema (`isThreadId`).
 *
 * @since 0.3.0
 * @category schemas
 */
export const ThreadId = Schema.String.check(
  Schema.makeFilter((text: string) => isThreadId(text) || threadIdRule)
).annotate({ identifier: "ThreadId" })

/**
 * OpenAI-style user input: `content` is text or a list of text parts.
 *
 * @since 0.3.0
 * @category schemas
 */
export const RoleContent = Schema.Struct({
  role: Schema.Literal("user"),
  content: Schema.Union([
    Schema.String,
    Schema.Array(Schema.Struct({ type: Schema.Literal("text"), text: Schema.String }))
  ])
}).annotate({ identifier: "RoleContent" })

/**
 * @since 0.3.0
 * @category models
 */
export type RoleContent = typeof RoleContent.Type

/**
 * The user's message: a `UIMessage` of role `user`, or `{ role: "user", content }`.
 *
 * @since 0.3.0
 * @category schemas
 */
export const UserInput = Schema.Union([UIMessage.UIMessage, RoleContent]).annotate({ identifier: "UserInput" })

/**
 * @since 0.3.0
 * @category models
 */
export type UserInput = typeof UserInput.Type

/**
 * The result of a tool call the client ran: `toolCallId` is the call's id as the UI
 * message shows it (a tool part's `toolCallId`) or as the provider gave it; `output` is
 * text, or any JSON value (sent to the provider as its JSON text); `isError` marks a
 * failed call.
 *
 * @since 0.3.0
 * @category schemas
 */
export const ToolResultInput = Schema.Struct({
  toolCallId: Schema.NonEmptyString,
  output: Json.JsonValue,
  isError: optional(Schema.Boolean)
}).annotate({ identifier: "ToolResultInput" })

/**
 * @since 0.3.0
 * @category models
 */
export type ToolResultInput = typeof ToolResultInput.Type

/**
 * The answer to one of the turn before's approval requests.
 *
 * @since 0.3.0
 * @category schemas
 */
export const ApprovalInput = Schema.Struct({
  requestId: Schema.NonEmptyString,
  approve: Schema.Boolean,
  reason: optional(Schema.String)
}).annotate({ identifier: "ApprovalInput" })

/**
 * @since 0.3.0
 * @category models
 */
export type ApprovalInput = typeof ApprovalInput.Type

/**
 * The input of a turn: the user's message, tool results, approval answers; at least
 * one of them.
 *
 * @since 0.3.0
 * @category schemas
 */
export const TurnInput = Schema.Struct({
  message: optional(UserInput),
  toolResults: optional(Schema.Array(ToolResultInput).check(Schema.isMaxLength(maxResults))),
  approvals: optional(Schema.Array(ApprovalInput).check(Schema.isMaxLength(maxResults)))
}).annotate({ identifier: "TurnInput" })

/**
 * @since 0.3.0
 * @category models
 */
export type TurnInput = typeof TurnInput.Type

/**
 * The body of a request to start a thread's next turn: its input, and optionally the
 * model, provider and tools (by name) to use within what the server allows.
 * `regenerate: true` runs the last turn again (its input, a new branch);
 * `replaces` names a turn whose input this one replaces (an edit: a new branch from
 * that turn's parent).
 *
 * @since 0.3.0
 * @category schemas
 */
export const TurnRequest = Schema.Struct({
  ...TurnInput.fields,
  model: optional(Schema.NonEmptyString),
  provider: optional(Schema.NonEmptyString),
  tools: optional(Schema.Array(Schema.NonEmptyString)),
  regenerate: optional(Schema.Boolean),
  replaces: optional(Schema.NonEmptyString)
}).annotate({ identifier: "TurnRequest" })

/**
 * @since 0.3.0
 * @category models
 */
export type TurnRequest = typeof TurnRequest.Type

/**
 * A turn's input that is not valid: `field` is its path (`message.parts[0].text`,
 * `toolResults[1].toolCallId`, `request` for the whole body), `reason` a sentence.
 *
 * @since 0.3.0
 * @category errors
 */
export class ThreadInputError extends Schema.TaggedError<ThreadInputError>()("ThreadInputError", {
  field: Schema.String,
  reason: Schema.String
}) {
  /**
   * @since 0.3.0
   */
  override get message(): string {
    return `invalid turn input: ${this.field}: ${this.reason}`
  }
}

const pathOf = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (out, key) => typeof key === "number" ? `${out}[${key}]` : out === "" ? String(key) : `${out}.${String(key)}`,
    ""
  )

const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1()

const errorOf = (issue: SchemaIssue.Issue, at: ReadonlyArray<PropertyKey> = []): ThreadInputError => {
  const first = formatIssue(issue).issues[0]
  const field = pathOf([
    ...at,
    ...(first?.path ?? []).map((segment) => typeof segment === "object" ? segment.key : segment)
  ])
  return new ThreadInputError({ field: field === "" ? "request" : field, reason: first?.message ?? "invalid value" })
}

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const decodeUIMessage = SchemaParser.decodeUnknownResult(UIMessage.UIMessage)
const decodeRoleContent = SchemaParser.decodeUnknownResult(RoleContent)
const decodeContentParts = SchemaParser.decodeUnknownResult(RoleContent.fields.content.members[1])

/**
 * The message's own error, when it has one, from the form it takes: a union's error
 * would name its first form's problem (`message.id` for an `{ role, content }` of
 * another role). A message that is not a user's is `message.role`, naming the roles
 * accepted; one with `content` is read as `{ role, content }` (its parts as parts);
 * any other as a `UIMessage`.
 */
const messageError = (body: unknown): ThreadInputError | undefined => {
  const message = isRecord(body) ? body["message"] : undefined
  if (!isRecord(message)) return undefined
  if (message["role"] !== "user") {
    return new ThreadInputError({
      field: "message.role",
      reason: `a turn starts from a user message: role "user" is the one accepted, got ${
        JSON.stringify(message["role"] ?? null)
      }`
    })
  }
  const content = message["content"]
  const problem = (decoded: Result.Result<unknown, SchemaIssue.Issue>, at: ReadonlyArray<string>) =>
    Result.isFailure(decoded) ? errorOf(decoded.failure, at) : undefined
  if (!("content" in message) || "parts" in message) return problem(decodeUIMessage(message), ["message"])
  return Array.isArray(content)
    ? problem(decodeContentParts(content), ["message", "content"])
    : problem(decodeRoleContent(message), ["message"])
}

const hasText = (message: UserInput): boolean =>
  ("content" in message
    ? typeof message.content === "string" ? message.content : message.content.map((part) => part.text).join("")
    : UIMessage.text(message)).trim().length > 0

/**
 * Checks what the schema cannot: a `UIMessage` input is the user's and has some text
 * (`message.parts`: files alone are not sent to the provider), a turn has some input,
 * and a regeneration (which takes the input of the turn it runs again) has none of its
 * own (`regenerate`: no `message`, `replaces`, `toolResults` or `approvals`).
 *
 * @since 0.3.0
 * @category validation
 */
export const checkInput = <
  A extends TurnInput & { readonly regenerate?: boolean | undefined; readonly replaces?: string | undefined }
>(
  input: A
): Result.Result<A, ThreadInputError> => {
  if (input.regenerate === true) {
    const own = [
      input.message === undefined ? undefined : "message",
      input.replaces === undefined ? undefined : "replaces",
      input.toolResults === undefined ? undefined : "toolResults",
      input.approvals === undefined ? undefined : "approvals"
    ].filter((field) => field !== undefined)
    if (own.length > 0) {
      return Result.fail(
        new ThreadInputError({
          field: "regenerate",
          reason: `runs the last turn again from its own input: no ${own.join(", ")} with it`
        })
      )
    }
  }
  if (input.message !== undefined && input.message.role !== "user") {
    return Result.fail(
      new ThreadInputError({
        field: "message.role",
        reason: `a turn starts from a user message: role "user" is the one accepted, got "${input.message.role}"`
      })
    )
  }
  if (input.message !== undefined && !hasText(input.message)) {
    return Result.fail(
      new ThreadInputError({
        field: "content" in input.message ? "message.content" : "message.parts",
        reason: "a user message needs some text (files alone are not sent to the provider)"
      })
    )
  }
  const empty = input.message === undefined && (input.toolResults ?? []).length === 0 &&
    (input.approvals ?? []).length === 0
  return empty && input.regenerate !== true
    ? Result.fail(
      new ThreadInputError({ field: "message", reason: "a turn needs a message, tool results or approval answers" })
    )
    : Result.succeed(input)
}

const decodeInput = SchemaParser.decodeUnknownResult(TurnInput)
const decodeRequest = SchemaParser.decodeUnknownResult(TurnRequest)

/**
 * Reads a turn's input, failing with a `ThreadInputError` naming the first bad field.
 *
 * @since 0.3.0
 * @category decoding
 */
export const decodeTurnInput = (input: unknown): Result.Result<TurnInput, ThreadInputError> =>
  decodeWith(decodeInput, input)

const decodeWith = <A extends TurnInput>(
  decode: (input: unknown) => Result.Result<A, SchemaIssue.Issue>,
  input: unknown
): Result.Result<A, ThreadInputError> =>
  Result.flatMap(
    Result.mapError(decode(input), (issue) => messageError(input) ?? errorOf(issue)),
    checkInput
  )

/**
 * Reads the body of a request to start a turn, failing with a `ThreadInputError`
 * naming the first bad field.
 *
 * @since 0.3.0
 * @category decoding
 */
export const decodeTurnRequest = (body: unknown): Result.Result<TurnRequest, ThreadInputError> =>
  decodeWith(decodeRequest, body)

/**
 * The user's input as a `UIMessage` (`id` for `{ role, content }`, which has none).
 *
 * @since 0.3.0
 * @category conversions
 */
export const toUIMessage = (input: UserInput, id: string): UIMessage.UIMessage => {
  if (!("content" in input)) return input
  const texts = typeof input.content === "string" ? [input.content] : input.content.map((part) => part.text)
  return { id, role: "user", parts: texts.map((text) => ({ type: "text", text })) }
}

/**
 * A tool result's output as the text sent to the provider: text as it is, any other
 * JSON value as its JSON text.
 *
 * @since 0.3.0
 * @category conversions
 */
export const outputText = (output: Json.JsonValue): string =>
  typeof output === "string" ? output : JSON.stringify(output)
