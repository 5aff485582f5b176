/**
 * The viewer page and its two assets, served to anyone: they hold no data, and every
 * request the page makes to the API carries its own credentials.
 *
 * @internal
 */
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { indexHtml, script, style } from "./viewerAssets.js"

// Only the page's own script and style, no framing, no referrer (the page's address
// may carry a token in its fragment, which browsers never send, but be strict).
const headers = {
  "cache-control": "no-cache",
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY"
} as const

const assets = new Map<`/${string}`, HttpServerResponse.HttpServerResponse>([
  ["/", HttpServerResponse.text(indexHtml, { contentType: "text/html; charset=utf-8", headers })],
  ["/viewer.js", HttpServerResponse.text(script, { contentType: "text/javascript; charset=utf-8", headers })],
  ["/viewer.css", HttpServerResponse.text(style, { contentType: "text/css; charset=utf-8", headers })]
])

/**
 * The routes of the page and its assets (`GET`, and `HEAD` through it).
 *
 * @internal
 */
export const pageRoutes: ReadonlyArray<HttpRouter.Route> = Array.from(
  assets,
  ([path, response]) => HttpRouter.route("GET", path, response)
)
