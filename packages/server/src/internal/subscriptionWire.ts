/**
 * The wire format of the Durable Streams subscription APIs (`__ds/subscriptions/...`):
 * request bodies as schemas, glob patterns over stream paths, the webhook URL policy,
 * and the JSON error body `{"error": {"code", "message", ...}}`.
 *
 * @internal
 */
import { SchemaDecode } from "@sluice/core"
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as SchemaTransformation from "effect/SchemaTransformation"

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
  | "UNAVAILABLE"
  | "INTERNAL"

/**
 * A refused subscription request: its status, code, a message naming what was wrong,
 * and further fields of the error object (`current_holder`, `generation`).
 *
 * @internal
 */
export class SubscriptionRefusal {
  readonly _tag = "SubscriptionRefusal"
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    readonly message: string,
    readonly extra: Readonly<Record<string, string | number>> = {}
  ) {}
}

/** @internal */
export const refuse = (
  status: number,
  code: ErrorCode,
  message: string,
  extra: Readonly<Record<string, string | number>> = {}
) => Effect.fail(new SubscriptionRefusal(status, code, message, extra))

/**
 * A JSON response that no cache keeps.
 *
 * @internal
 */
export const json = (status: number, body: unknown): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.jsonUnsafe(body, { status, headers: { "cache-control": "no-store" } })

/**
 * The response of a refusal.
 *
 * @internal
 */
export const refusalResponse = (refusal: SubscriptionRefusal): HttpServerResponse.HttpServerResponse =>
  json(refusal.status, { error: { code: refusal.code, message: refusal.message, ...refusal.extra } })

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
 * field (or saying the body is not JSON).
 *
 * @internal
 */
export const decodeBody = <A, I>(schema: Schema.Codec<A, I, never, unknown>) => {
  const decode = SchemaDecode.decodeUnknown(schema, { errors: "all", onExcessProperty: "ignore" })
  return (body: Uint8Array): Effect.Effect<A, SubscriptionRefusal> => {
    let parsed: unknown
    try {
      parsed = JSON.parse(new TextDecoder().decode(body))
    } catch {
      return refuse(400, "INVALID_REQUEST", "the body is not JSON")
    }
    return Effect.mapError(
      decode(parsed),
      (error) => new SubscriptionRefusal(400, "INVALID_REQUEST", describe(error.issue))
    )
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

const ipv4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/

const isLocalIpv4 = (host: string): boolean => {
  const match = ipv4.exec(host)
  if (match === null) return false
  const [a, b] = [Number(match[1]), Number(match[2])]
  return a === 0 || a === 10 || a === 127 || (a === 100 && b >= 64 && b <= 127) || (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 198 && (b === 18 || b === 19)) ||
    a >= 224
}

const isLocalIpv6 = (host: string): boolean => {
  if (!host.includes(":")) return false
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(host)
  if (mapped !== null) return isLocalIpv4(mapped[1]!)
  // a mapped address the URL parser wrote in hex, the unspecified and loopback
  // addresses, unique-local (fc00::/7), link-local (fe80::/10) and multicast (ff00::/8)
  return host.startsWith("::") || /^f[c-f]/.test(host)
}

/**
 * Whether an IP address is one a webhook must not reach: private, loopback,
 * link-local, unique-local, multicast or unspecified.
 *
 * @internal
 */
export const isLocalAddress = (address: string): boolean => {
  const host = address.toLowerCase()
  return isLocalIpv4(host) || isLocalIpv6(host)
}

/**
 * Whether a host name or address is loopback.
 *
 * @internal
 */
export const isLoopback = (host: string): boolean =>
  host === "localhost" || host.endsWith(".localhost") || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) ||
  host === "::1"

const isLocalName = (host: string): boolean =>
  host === "localhost" || [".localhost", ".local", ".internal", ".home.arpa"].some((suffix) => host.endsWith(suffix))

/**
 * Why a webhook URL is refused, or `undefined` when it is accepted: it must be
 * `https` to a public host; `http` is accepted for loopback on an insecure-local
 * server, and any scheme for a host of the allow-list. Private (RFC 1918, carrier-
 * grade NAT), loopback, link-local (cloud metadata), unique-local and multicast
 * addresses and local names are refused. The addresses a name resolves to are
 * checked when a post is due (`hostToResolve`).
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
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, "")
  if (policy.allowHosts.some((allowed) => allowed.toLowerCase() === host || allowed.toLowerCase() === url.host)) {
    return undefined
  }
  if (url.protocol === "http:") {
    return policy.loopbackHttp && isLoopback(host)
      ? undefined
      : "webhook.url must use https (plain http only to loopback on an insecure-local server, or to an allowed host)"
  }
  if (isLocalName(host) || isLocalAddress(host)) {
    return "webhook.url must not target a private, loopback or link-local host"
  }
  return undefined
}

/**
 * The host name of an accepted webhook URL whose addresses must be checked before a
 * post (an `https` URL to a name, not an address, that the allow-list does not name),
 * or `undefined`.
 *
 * @internal
 */
export const hostToResolve = (raw: string, policy: WebhookPolicy): string | undefined => {
  const url = new URL(raw)
  const host = url.hostname.toLowerCase()
  if (url.protocol !== "https:" || host.startsWith("[") || ipv4.test(host)) return undefined
  return policy.allowHosts.some((allowed) => allowed.toLowerCase() === host || allowed.toLowerCase() === url.host)
    ? undefined
    : host
}
