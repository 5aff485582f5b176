import { SchemaDecode } from "@sluice/core"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { InvalidUpsertOptions, type OptionIssue } from "../UpsertErrors.js"

const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (out, key) => (typeof key === "number" ? `${out}[${key}]` : out === "" ? String(key) : `${out}.${String(key)}`),
    ""
  )

/**
 * A positive integer, with the message the options errors show.
 *
 * @internal
 */
export const PositiveInt = Schema.Number.pipe(
  Schema.int({ message: () => "must be a positive integer" }),
  Schema.positive({ message: () => "must be a positive integer" })
).annotations({ message: () => ({ message: "must be a positive integer", override: false }) })

/**
 * A non-negative integer number of milliseconds or attempts.
 *
 * @internal
 */
export const NonNegativeInt = Schema.Number.pipe(
  Schema.int({ message: () => "must be a non-negative integer" }),
  Schema.nonNegative({ message: () => "must be a non-negative integer" })
).annotations({ message: () => ({ message: "must be a non-negative integer", override: false }) })

/**
 * Decodes options with a schema, turning every parse issue into one `OptionIssue`.
 *
 * @internal
 */
export const decodeOptions =
  <A, I>(schema: Schema.Schema<A, I>) => (input: unknown): Either.Either<A, InvalidUpsertOptions> =>
    Either.mapLeft(
      SchemaDecode.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "ignore" })(input),
      (error) => {
        const issues: Array<OptionIssue> = ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
          path: formatPath(issue.path),
          message: issue.message
        }))
        const text = issues.map((issue) => (issue.path === "" ? issue.message : `${issue.path}: ${issue.message}`))
          .join("; ")
        return new InvalidUpsertOptions({ issues, message: `invalid options: ${text}` })
      }
    )
