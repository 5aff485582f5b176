/**
 * The wire format of the Durable Streams subscription APIs (`__ds/subscriptions/...`):
 * request bodies as schemas, glob patterns over stream paths, the webhook URL policy,
 * and the JSON error body `{"error": {"code", "message", ...}}`.
 *
 * @internal
 */
import { Json, SchemaDecode } from "@sluice/core"
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as SchemaTransformation from "effect/SchemaTransformation"
import { DurableRefusal } from "../DurableRefusal.js"
import { classifyAddress, isAllowedHost, normalHost, webhookTarget } from "./webhookAddress.js"

/**
 * A durable stream's name (its path under `/v1/stream/`): 1 to 512 characters, no
 * white space, braces (they delimit the Redis hash tag) or control characters.
 *
 * @internal
 */
export const streamNamePattern = /^[^\s{}\u0000-\u001f]{1,512}$/

/**
 * Whether a stream path is under the reserved `__ds` prefix.
 *
 * @internal
 */
export const isReserved = (path: string): boolean => path === "__ds" || path.startsWith("__ds/")

/**
 * The error codes of the subscription APIs.
 *
 * @internal
 */
export type ErrorCode =
  | "INVALID_REQUEST"
  | "SUBSCRIPTION_NOT_FOUND"
  | "SUBSCRIPTION_ALREADY_EXISTS"
  | "WEBHOOK_URL_REJECTED"
  | "TOKEN_INVALID"
  | "FORBIDDEN"
  | "FENCED"
  | "ALREADY_CLAIMED"
  | "NO_PENDING_WORK"
  | "INVALID_OFFSET"
  | "NOT_FOUND"
  | "PAYLOAD_TOO_LARGE"
  | "TOO_MANY_SUBSCRIPTIONS"
  | "UNAVAILABLE"
  | "INTERNAL"

/**
 * Fails with a refusal of a subscription request: its status, code, a message naming
 * what was wrong, and further fields of the error object (`current_holder`,
 * `generation`).
 *
 * @internal
 */
export const refuse = (
  status: number,
  code: ErrorCode,
  message: string,
  details?: Readonly<Record<string, string | number>>
): Effect.Effect<never, DurableRefusal> => Effect.fail(refusal(status, code, message, details))

/**
 * A refusal of a subscription request.
 *
 * @internal
 */
export const refusal = (
  status: number,
  code: ErrorCode,
  message: string,
  details?: Readonly<Record<string, string | number>>
): DurableRefusal => new DurableRefusal({ status, code, message, ...(details === undefined ? {} : { details }) })

/**
 * A JSON response that no cache keeps.
 *
 * @internal
 */
export const json = (status: number, body: unknown): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.jsonUnsafe(body, { status, headers: { "cache-control": "no-store" } })

/**
 * A stream path in a request body: a stream name, not under `__ds/`; leading and
 * trailing slashes are dropped.
 *
 * @internal
 */
export const StreamPath = Schema.String.pipe(
  Schema.decodeTo(
    Schema.String.check(
      Schema.makeFilter((path: string) => streamNamePattern.test(path) && !isReserved(path), {
        message: "a stream path: 1 to 512 characters without white space, braces or control characters, not under __ds/"
      })
    ),
    SchemaTransformation.transform({
      decode: (path: string) => path.replace(/^\/+/, "").replace(/\/+$/, ""),
      encode: (path: string) => path
    })
  )
)

const Pattern = Schema.String.check(
  Schema.makeFilter(
    (pattern: string) => streamNamePattern.test(pattern) && pattern.split("/").every((part) => part !== ""),
    { message: "a glob over stream paths: segments separated by /, * within a segment, ** for any segments" }
  )
)

/**
 * The least, default and greatest lease of a subscription, in milliseconds.
 *
 * @internal
 */
export const leaseTtl = { min: 1_000, default: 30_000, max: 600_000 } as const

/**
 * The body of `PUT __ds/subscriptions/:id`.
 *
 * @internal
 */
export const CreateBody = Schema.Struct({
  type: Schema.Literals(["webhook", "pull-wake"]),
  pattern: Schema.optionalKey(Pattern),
  streams: Schema.optionalKey(Schema.Array(StreamPath).check(Schema.isMaxLength(1000))),
  webhook: Schema.optionalKey(Schema.Struct({ url: Schema.String })),
  wake_stream: Schema.optionalKey(StreamPath),
  lease_ttl_ms: Schema.optionalKey(
    Schema.Int.check(Schema.isBetween({ minimum: leaseTtl.min, maximum: leaseTtl.max }))
  ),
  description: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(1024)))
})

/**
 * The body of `POST __ds/subscriptions/:id/streams`.
 *
 * @internal
 */
export const StreamsBody = Schema.Struct({
  streams: Schema.Array(StreamPath).check(Schema.isMinLength(1), Schema.isMaxLength(1000))
})

/**
 * The body of a callback, an ack or a release: the wake it is about, and (not for a
 * release) the offsets processed and whether the work is done.
 *
 * @internal
 */
export const AckBody = Schema.Struct({
  wake_id: Schema.String,
  generation: Schema.Int,
  acks: Schema.optionalKey(
    Schema.Array(Schema.Struct({
      stream: Schema.optionalKey(StreamPath),
      path: Schema.optionalKey(StreamPath),
      offset: Schema.String
    })).check(Schema.isMaxLength(1000))
  ),
  done: Schema.optionalKey(Schema.Boolean)
})

/**
 * The body of a claim.
 *
 * @internal
 */
export const ClaimBody = Schema.Struct({ worker: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(256)) })

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

// A field's path as `a.0.b`.
const pathOf = (path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>): string =>
  path.map((segment) => String(typeof segment === "object" ? segment.key : segment)).join(".")

const describe = (issue: SchemaIssue.Issue): string =>
  formatIssues(issue).issues.map((each) =>
    each.path === undefined || each.path.length === 0 ? each.message : `${pathOf(each.path)}: ${each.message}`
  ).join("; ")

/**
 * Decodes a JSON request body with a schema: 400 `INVALID_REQUEST` naming each bad
 * field, saying the body is not JSON, or that it nests deeper than `maxDepth`
 * (docs/http.md#json-nesting; checked before it is parsed, in one pass without
 * recursion, so neither the decoding nor the naming of a bad field recurses deeper).
 *
 * @internal
 */
export const decodeBody = <A, I>(schema: Schema.Codec<A, I, never, unknown>) => {
  const decode = SchemaDecode.decodeUnknown(schema, { errors: "all", onExcessProperty: "ignore" })
  return (body: Uint8Array, maxDepth: number = Json.defaultMaxDepth): Effect.Effect<A, DurableRefusal> => {
    const parsed = Json.parseBounded(new TextDecoder().decode(body), maxDepth)
    if (Result.isFailure(parsed)) {
      return refuse(
        400,
        "INVALID_REQUEST",
        parsed.failure._tag === "JsonTooDeep" ? parsed.failure.message : "the body is not JSON"
      )
    }
    return Effect.mapError(decode(parsed.success), (error) => refusal(400, "INVALID_REQUEST", describe(error.issue)))
  }
}

const segmentRegex = (segment: string): RegExp =>
  new RegExp(`^${segment.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join("[^/]*")}$`)

/**
 * Whether a glob matches a stream path: `*` matches within one segment, a segment
 * `**` matches any number of segments (none included).
 *
 * @internal
 */
export const globMatches = (pattern: string, path: string): boolean => {
  const want = pattern.split("/")
  const have = path.split("/")
  const seen = new Map<number, boolean>()
  const from = (i: number, j: number): boolean => {
    const key = i * (have.length + 1) + j
    const known = seen.get(key)
    if (known !== undefined) return known
    let result: boolean
    if (i === want.length) result = j === have.length
    else if (want[i] === "**") result = from(i + 1, j) || (j < have.length && from(i, j + 1))
    else result = j < have.length && segmentRegex(want[i]!).test(have[j]!) && from(i + 1, j + 1)
    seen.set(key, result)
    return result
  }
  return from(0, 0)
}

/**
 * Which webhook URLs a server accepts: plain `http` to loopback (only on an
 * insecure-local server), and hosts (`host` or `host:port`) allowed whatever they are.
 *
 * @internal
 */
export interface WebhookPolicy {
  readonly loopbackHttp: boolean
  readonly allowHosts: ReadonlyArray<string>
}

/**
 * Whether a host name or address is loopback (`localhost` and its subdomains, 127/8,
 * `::1`, the IPv4-mapped 127/8), whatever its case and trailing dots.
 *
 * @internal
 */
export const isLoopback = (host: string): boolean => {
  const name = normalHost(host)
  return name === "localhost" || name.endsWith(".localhost") || classifyAddress(name)?._tag === "Loopback"
}

/**
 * Why a webhook URL is refused, or `undefined` when it is accepted: it must be
 * `https` to a public host; `http` is accepted for loopback on an insecure-local
 * server, and any scheme for a host of the allow-list. Private (RFC 1918, carrier-
 * grade NAT), loopback, link-local (cloud metadata), unique-local and multicast
 * addresses and local names are refused. The addresses a name resolves to are
 * checked when a post is due (`webhookTarget`).
 *
 * @internal
 */
export const webhookUrlProblem = (raw: string, policy: WebhookPolicy): string | undefined => {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return "webhook.url is not a URL"
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "webhook.url must use https"
  if (url.username !== "" || url.password !== "") return "webhook.url must not carry credentials"
  if (isAllowedHost(policy, url.hostname, url.port)) return undefined
  if (url.protocol === "http:" && !(policy.loopbackHttp && isLoopback(url.hostname))) {
    return "webhook.url must use https (plain http only to loopback on an insecure-local server, or to an allowed host)"
  }
  // every form of a local host (names, mapped, NAT64, 6to4, Teredo, ...): one rule
  const target = webhookTarget(raw, policy)
  return target._tag === "Refused"
    ? `webhook.url must not target a private, loopback or link-local host (${target.reason})`
    : undefined
}
