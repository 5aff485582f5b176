import { SchemaDecode } from "@sluice/core"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import { InvalidUpsertOptions, type OptionIssue } from "../UpsertErrors.js"

const formatPath = (path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>): string =>
  path.reduce<string>((out, segment) => {
    const key = typeof segment === "object" ? segment.key : segment
    return typeof key === "number" ? `${out}[${key}]` : out === "" ? String(key) : `${out}.${String(key)}`
  }, "")

const positive = { message: "must be a positive integer" }

/**
 * A positive integer, with the message the options errors show.
 *
 * @internal
 */
export const PositiveInt = Schema.Number.annotate(positive).check(
  Schema.isInt(positive).abort(),
  Schema.isGreaterThan(0, positive)
)

const nonNegative = { message: "must be a non-negative integer" }

/**
 * A non-negative integer number of milliseconds or attempts.
 *
 * @internal
 */
export const NonNegativeInt = Schema.Number.annotate(nonNegative).check(
  Schema.isInt(nonNegative).abort(),
  Schema.isGreaterThanOrEqualTo(0, nonNegative)
)

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

/**
 * Decodes options with a schema, turning every schema issue into one `OptionIssue`
 * (a field that breaks several checks with the same message is named once).
 *
 * @internal
 */
export const decodeOptions =
  <A, I>(schema: Schema.Codec<A, I, never, unknown>) => (input: unknown): Result.Result<A, InvalidUpsertOptions> =>
    Result.mapError(
      SchemaDecode.decodeUnknownResult(schema, { errors: "all", onExcessProperty: "ignore" })(input),
      (error) => {
        const seen = new Set<string>()
        const issues: Array<OptionIssue> = []
        for (const issue of formatIssues(error.issue).issues) {
          const path = formatPath(issue.path ?? [])
          const key = `${path}\u0000${issue.message}`
          if (seen.has(key)) continue
          seen.add(key)
          issues.push({ path, message: issue.message })
        }
        const text = issues.map((issue) => (issue.path === "" ? issue.message : `${issue.path}: ${issue.message}`))
          .join("; ")
        return new InvalidUpsertOptions({ issues, message: `invalid options: ${text}` })
      }
    )
