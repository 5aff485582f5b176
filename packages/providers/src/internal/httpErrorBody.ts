import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { Json, SchemaDecode } from "@sluice/core"

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

const ErrorDetails = Schema.Struct({
  message: optional(Schema.String),
  type: optional(Schema.String),
  code: optional(Schema.NullOr(Schema.Union(Schema.String, Schema.Number))),
  status: optional(Schema.String)
})

/**
 * The error bodies the providers answer a failed request with: OpenAI
 * `{"error": {message, type, code}}`, Anthropic `{"type": "error", "error": {type,
 * message}}`, Gemini `{"error": {code, message, status}}` (or an array of one).
 */
const ErrorBody = Schema.Union(
  Schema.Struct({ error: ErrorDetails }),
  Schema.Tuple([Schema.Struct({ error: ErrorDetails })], Schema.Unknown)
)

const decode = SchemaDecode.decodeUnknownEither(ErrorBody)

/**
 * The provider's own code and message from an HTTP error body: the code is the
 * error's string `code`, else its `status` (Gemini), else its `type` (Anthropic); a
 * body that is not one of the known shapes gives its text (cut to 500 characters) as
 * the message.
 *
 * @internal
 */
export const httpErrorDetails = (text: string): { readonly code?: string; readonly message?: string } => {
  const json = Json.parseOrUndefined(text)
  const decoded = json === undefined ? undefined : Either.getOrUndefined(decode(json))
  if (decoded === undefined) {
    const trimmed = text.trim()
    return trimmed === "" ? {} : { message: trimmed.length > 500 ? `${trimmed.slice(0, 500)}...` : trimmed }
  }
  const error = "error" in decoded ? decoded.error : decoded[0].error
  const code = typeof error.code === "string" ? error.code : (error.status ?? error.type)
  return {
    ...(code === undefined ? {} : { code }),
    ...(error.message === undefined ? {} : { message: error.message })
  }
}
