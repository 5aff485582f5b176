/**
 * The connections that post subscription webhooks, checked where they are made: the
 * addresses a name resolves to are the addresses the socket connects to, so a name
 * cannot pass the check with a public address and then connect to a private one (DNS
 * rebinding); and a host that is an IP address, which Node connects to without any
 * lookup, is checked before its connection is opened, in whatever form it is written
 * (IPv4-mapped, NAT64, 6to4, Teredo, ...: `webhookAddress`), by the agent that opens
 * it, for every connection the client makes (a followed redirect's too). A host of
 * the allow-list connects to whatever it is; on an insecure-local server, loopback
 * addresses are allowed too (its plain-http receivers on `localhost`).
 *
 * @internal
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import * as Layer from "effect/Layer"
import type { LookupAddress, LookupAllOptions, LookupOptions } from "node:dns"
import { lookup as dnsLookup } from "node:dns"
import * as http from "node:http"
import * as https from "node:https"
import { isIP, type LookupFunction, Socket } from "node:net"
import type { Duplex } from "node:stream"
import type { WebhookPolicy } from "./subscriptionWire.js"
import { addressRefusal, isAllowedHost, normalHost } from "./webhookAddress.js"

/**
 * Resolves a name to all its addresses, as `dns.lookup` with `all: true` (the default).
 *
 * @internal
 */
export type Resolve = (
  hostname: string,
  options: LookupAllOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: Array<LookupAddress>) => void
) => void

const systemResolve: Resolve = (hostname, options, callback) => dnsLookup(hostname, options, callback)

const denied = (message: string): NodeJS.ErrnoException => {
  const error: NodeJS.ErrnoException = new Error(message)
  error.code = "EADDRNOTAVAIL"
  return error
}

/**
 * A `lookup` for an HTTP agent's connections: it refuses (with `EADDRNOTAVAIL`-like
 * error naming the host) a name that resolves to a private, loopback or link-local
 * address in any form (`webhookAddress.addressRefusal`), unless the name is on the
 * allow-list (with any port: the webhook URL's own port was checked against the list
 * when it was accepted; case and trailing dots ignored).
 *
 * @internal
 */
export const guardedLookup = (policy: WebhookPolicy, resolve: Resolve = systemResolve): LookupFunction => {
  return (hostname: string, options: LookupOptions, callback) => {
    const host = hostname.toLowerCase()
    resolve(host, { ...options, all: true }, (error, addresses) => {
      if (error !== null) return callback(error, "", 0)
      const refused = isAllowedHost(policy, host)
        ? undefined
        : addresses.find((entry) => addressRefusal(entry.address, policy) !== undefined)
      if (refused !== undefined) {
        return callback(
          denied(`${hostname} resolves to ${refused.address}, a private, loopback or link-local address`),
          "",
          0
        )
      }
      if (options.all === true) return callback(null, addresses)
      const first = addresses[0]
      if (first === undefined) {
        const none: NodeJS.ErrnoException = new Error(`${hostname} has no address`)
        none.code = "ENOTFOUND"
        return callback(none, "", 0)
      }
      return callback(null, first.address, first.family)
    })
  }
}

/**
 * Why a connection to a host that is an IP address may not be opened (Node opens it
 * without calling `lookup`), or `undefined`: a name (its lookup checks it), a host of
 * the allow-list, or an address that may be reached.
 *
 * @internal
 */
export const literalRefusal = (policy: WebhookPolicy, host: string | null | undefined): string | undefined => {
  if (host === null || host === undefined) return undefined
  const bare = normalHost(host)
  if (isIP(bare) === 0 || isAllowedHost(policy, bare)) return undefined
  const refusal = addressRefusal(bare, policy)
  return refusal === undefined ? undefined : `the webhook host ${refusal}`
}

type ConnectionCallback = (error: Error | null, stream: Duplex) => void

// A connection refused before it is opened: the agent's callback gets the error (Node's
// agent then fails the request with it), or, without one, a socket that fails with it.
const refusedConnection = (error: Error, callback: ConnectionCallback | undefined): Duplex | undefined => {
  if (callback !== undefined) {
    callback(error, new Socket())
    return undefined
  }
  const socket = new Socket()
  process.nextTick(() => socket.destroy(error))
  return socket
}

// A connection to a literal IP host the policy refuses is refused where it would be
// opened; anything else connects (a name was checked by the agent's lookup).
const guardedConnection = <A>(
  policy: WebhookPolicy,
  options: http.ClientRequestArgs,
  callback: ConnectionCallback | undefined,
  connect: () => A
) => {
  const refusal = literalRefusal(policy, options.host)
  return refusal === undefined ? connect() : refusedConnection(denied(refusal), callback)
}

/**
 * Node's http agent for webhooks: names resolve through `guardedLookup`, and a host
 * that is an IP address is checked (`literalRefusal`) before its connection is opened,
 * whichever request asks for it.
 *
 * @internal
 */
export class GuardedHttpAgent extends http.Agent {
  constructor(private readonly policy: WebhookPolicy, resolve?: Resolve) {
    super({ lookup: guardedLookup(policy, resolve) })
  }
  override createConnection(options: http.ClientRequestArgs, callback?: ConnectionCallback) {
    return guardedConnection(this.policy, options, callback, () => super.createConnection(options, callback))
  }
}

/**
 * `GuardedHttpAgent` for https.
 *
 * @internal
 */
export class GuardedHttpsAgent extends https.Agent {
  constructor(private readonly policy: WebhookPolicy, resolve?: Resolve) {
    super({ lookup: guardedLookup(policy, resolve) })
  }
  override createConnection(options: http.ClientRequestArgs, callback?: ConnectionCallback) {
    return guardedConnection(this.policy, options, callback, () => super.createConnection(options, callback))
  }
}

/**
 * The HTTP client of subscription webhooks: Node's, through `GuardedHttpAgent` and
 * `GuardedHttpsAgent` (closed with the layer), so that every connection it opens is
 * checked where it is made, a followed redirect's too; and a request to a host that
 * is an IP address is checked before it is sent as well, so that it fails with a
 * `TransportError` naming the address, never connected. Webhook posts follow no
 * redirect (a 3xx fails the post), so the URL's host is the host connected to.
 *
 * @internal
 */
export const webhookClient = (policy: WebhookPolicy): Layer.Layer<HttpClient.HttpClient> =>
  Layer.effect(
    HttpClient.HttpClient,
    HttpClient.HttpClient.useSync(
      HttpClient.mapRequestEffect((request) => {
        const refusal = literalRefusal(policy, hostOf(request.url))
        return refusal === undefined
          ? Effect.succeed(request)
          : Effect.fail(
            new HttpClientError.HttpClientError({
              reason: new HttpClientError.TransportError({ request, cause: denied(refusal), description: refusal })
            })
          )
      })
    )
  ).pipe(
    Layer.provide(NodeHttpClient.layerNodeHttpNoAgent),
    Layer.provide(Layer.effect(
      NodeHttpClient.HttpAgent,
      Effect.acquireRelease(
        Effect.sync(() => ({ http: new GuardedHttpAgent(policy), https: new GuardedHttpsAgent(policy) })),
        (agents) =>
          Effect.sync(() => {
            agents.http.destroy()
            agents.https.destroy()
          })
      )
    ))
  )

// The host of an absolute URL (brackets kept), or `undefined`.
const hostOf = (url: string): string | undefined => {
  try {
    return new URL(url).hostname
  } catch {
    return undefined
  }
}
