/**
 * The name lookup of the connections that post subscription webhooks, checked where
 * the connection is made: the addresses a name resolves to are the addresses the
 * socket connects to, so a name cannot pass the check with a public address and then
 * connect to a private one (DNS rebinding). A name of the allow-list connects to
 * whatever it resolves to; on an insecure-local server, loopback addresses are
 * allowed too (its plain-http receivers on `localhost`).
 *
 * @internal
 */
import type { LookupAddress, LookupAllOptions, LookupOptions } from "node:dns"
import { lookup as dnsLookup } from "node:dns"
import type { LookupFunction } from "node:net"
import { isLocalAddress, isLoopback, type WebhookPolicy } from "./subscriptionWire.js"

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

// The host part of an allow-list entry (`host`, `host:port`, `[v6]:port`).
const hostOf = (entry: string): string => {
  const lower = entry.toLowerCase()
  if (lower.startsWith("[")) return lower.slice(1, lower.indexOf("]"))
  const colon = lower.lastIndexOf(":")
  return colon === -1 ? lower : lower.slice(0, colon)
}

/**
 * A `lookup` for an HTTP agent's connections: it refuses (with `EADDRNOTAVAIL`-like
 * error naming the host) a name that resolves to a private, loopback or link-local
 * address, unless the name is on the allow-list (with any port: the webhook URL's own
 * port was checked against the list when it was accepted).
 *
 * @internal
 */
export const guardedLookup = (policy: WebhookPolicy, resolve: Resolve = systemResolve): LookupFunction => {
  const allowed = new Set(policy.allowHosts.map(hostOf))
  return (hostname: string, options: LookupOptions, callback) => {
    const host = hostname.toLowerCase()
    resolve(host, { ...options, all: true }, (error, addresses) => {
      if (error !== null) return callback(error, "", 0)
      const refused = allowed.has(host)
        ? undefined
        : addresses.find((entry) =>
          isLocalAddress(entry.address) && !(policy.loopbackHttp && isLoopback(entry.address))
        )
      if (refused !== undefined) {
        const denied: NodeJS.ErrnoException = new Error(
          `${hostname} resolves to ${refused.address}, a private, loopback or link-local address`
        )
        denied.code = "EADDRNOTAVAIL"
        return callback(denied, "", 0)
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
