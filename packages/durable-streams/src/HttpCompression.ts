/**
 * Response compression for the bodies a client reads whole (a Durable Streams
 * catch-up read, a turn's snapshot): which coding a request accepts
 * (`Accept-Encoding` with its q-values), gzip above a size threshold, the entity tag
 * of each representation, and `If-None-Match` against either. Live bodies (SSE,
 * long-polls) are never compressed: they go through their callers untouched.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { gzip } from "node:zlib"

/**
 * The codings a body is sent in.
 *
 * @since 0.3.0
 */
export type Encoding = "gzip" | "identity"

/**
 * Bodies smaller than this many bytes go as they are: gzip's header and trailer would
 * eat what it saves.
 *
 * @since 0.3.0
 */
export const minBytes = 1024

/**
 * The gzip level: the fastest. On a 1 MB snapshot of prose it leaves 21% of the bytes
 * in 9 ms (level 6, zlib's default: 15% in 41 ms; level 9: 14% in 235 ms): a 4 MB
 * snapshot gains about 35 ms of compression instead of about 160, inside the time it
 * takes to write the plain body. The work runs on libuv's thread pool, not on the
 * event loop.
 *
 * @since 0.3.0
 */
export const level = 1

const qvaluePattern = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/

/**
 * The q-value of each coding an `Accept-Encoding` header names (lower-cased;
 * `x-gzip` counts as `gzip`). An element whose q-value is malformed is ignored, as if
 * it were not there.
 *
 * @since 0.3.0
 */
export const acceptedCodings = (header: string): ReadonlyMap<string, number> => {
  const codings = new Map<string, number>()
  for (const element of header.split(",")) {
    const [rawName, ...params] = element.split(";")
    const name = rawName!.trim().toLowerCase()
    if (name === "") continue
    let q = 1
    let valid = true
    for (const param of params) {
      const equals = param.indexOf("=")
      if (equals < 0 || param.slice(0, equals).trim().toLowerCase() !== "q") continue
      const value = param.slice(equals + 1).trim()
      if (!qvaluePattern.test(value)) valid = false
      else q = Number(value)
    }
    if (valid) codings.set(name === "x-gzip" ? "gzip" : name, q)
  }
  return codings
}

/**
 * The coding to send a body in, for a request's `Accept-Encoding`: gzip when the
 * header accepts it (by name or by `*`), unless it prefers `identity` (named, or by
 * `*`, with a higher q-value); else identity. No header, or an empty one, is
 * identity; so is a header that refuses both (nothing better can be sent).
 *
 * @since 0.3.0
 */
export const negotiate = (acceptEncoding: string | undefined): Encoding => {
  if (acceptEncoding === undefined) return "identity"
  const codings = acceptedCodings(acceptEncoding)
  const any = codings.get("*")
  const gzipQ = codings.get("gzip") ?? any ?? 0
  const identityQ = codings.get("identity") ?? any ?? 0
  return gzipQ > 0 && gzipQ >= identityQ ? "gzip" : "identity"
}

/**
 * The coding a body may go in when compression is `enabled` (`negotiate`), or
 * `undefined` (never compressed) when it is not.
 *
 * @since 0.3.0
 */
export const encodingFor = (enabled: boolean, acceptEncoding: string | undefined): Encoding | undefined =>
  enabled ? negotiate(acceptEncoding) : undefined

/**
 * The entity tag of a representation: the identity tag as it is, the gzip one with
 * `-gzip` before its closing quote (`"abc"` becomes `"abc-gzip"`).
 *
 * @since 0.3.0
 */
export const etagOf = (etag: string, encoding: Encoding): string =>
  encoding === "identity" ? etag : etag.endsWith("\"") ? `${etag.slice(0, -1)}-gzip"` : `${etag}-gzip`

/**
 * The tag of `If-None-Match` (a list of tags, weak or strong, or `*`) that matches one
 * of `etags` by the weak comparison, if any.
 *
 * @since 0.3.0
 */
export const matching = (ifNoneMatch: string | undefined, etags: ReadonlyArray<string>): string | undefined => {
  if (ifNoneMatch === undefined) return undefined
  const opaque = (tag: string) => tag.trim().replace(/^W\//, "")
  for (const given of ifNoneMatch.split(",")) {
    const tag = opaque(given)
    if (tag === "*") return etags[0]
    const found = etags.find((etag) => opaque(etag) === tag)
    if (found !== undefined) return found
  }
  return undefined
}

/**
 * `body` gzipped, off the event loop's thread.
 *
 * @since 0.3.0
 */
export const gzipped = (body: Uint8Array): Effect.Effect<Uint8Array> =>
  Effect.callback<Uint8Array>((resume) => {
    gzip(body, { level }, (error, result) => resume(error === null ? Effect.succeed(result) : Effect.die(error)))
  })

/**
 * How a body may be sent: the coding the request accepts (`undefined`: never
 * compressed, as when the server has compression off), the headers of the response
 * (its `content-type` among them), its entity tag if it has one, and the request's
 * `If-None-Match`.
 *
 * @since 0.3.0
 */
export interface Representation {
  readonly encoding: Encoding | undefined
  readonly headers: Readonly<Record<string, string>>
  readonly etag?: string | undefined
  readonly ifNoneMatch?: string | undefined
}

// A body as it is: a text goes to Node as it is, which encodes it once as it writes it.
const identity = (body: Uint8Array | string, headers: Readonly<Record<string, string>>) =>
  typeof body === "string"
    ? HttpServerResponse.raw(body, {
      headers,
      contentType: headers["content-type"],
      contentLength: Buffer.byteLength(body)
    })
    : HttpServerResponse.uint8Array(body, { headers })

/**
 * The response of a body read whole: 304 (with the tag that matched) when
 * `If-None-Match` names the identity or the gzip representation's tag; else the body,
 * gzipped with `Content-Encoding: gzip` and the gzip tag when the request accepts
 * gzip and the body is at least `minBytes`, else as it is. While compression is on,
 * every such response says `Vary: Accept-Encoding`.
 *
 * @since 0.3.0
 */
export const respond = (
  representation: Representation,
  body: () => Uint8Array | string
): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
  Effect.gen(function*() {
    const { encoding, etag, headers } = representation
    const vary: Record<string, string> = encoding === undefined ? {} : { vary: "accept-encoding" }
    if (etag !== undefined) {
      const matched = matching(representation.ifNoneMatch, [etag, etagOf(etag, "gzip")])
      if (matched !== undefined) {
        return HttpServerResponse.empty({ status: 304, headers: { ...vary, etag: matched } })
      }
    }
    const content = body()
    const size = typeof content === "string" ? Buffer.byteLength(content) : content.length
    if (encoding !== "gzip" || size < minBytes) {
      return identity(content, { ...headers, ...vary, ...(etag === undefined ? {} : { etag }) })
    }
    const compressed = yield* gzipped(typeof content === "string" ? Buffer.from(content) : content)
    return HttpServerResponse.uint8Array(compressed, {
      headers: {
        ...headers,
        ...vary,
        "content-encoding": "gzip",
        ...(etag === undefined ? {} : { etag: etagOf(etag, "gzip") })
      }
    })
  })
