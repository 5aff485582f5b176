/**
 * Where a webhook may connect: one classification of IP addresses, in every form an
 * address can take (IPv4, IPv6, IPv4 embedded in IPv6 by mapping, translation, NAT64,
 * 6to4 or Teredo), and of host names (case and trailing dots ignored). It decides at
 * each place a webhook's target is checked: when a subscription is created, before each
 * post, and where the post's connection is made (`webhookLookup`).
 *
 * @internal
 */
import { isIP } from "node:net"
import type { WebhookPolicy } from "./subscriptionWire.js"

/**
 * What an address is to a webhook: `Public` may be reached; `Loopback` (127.0.0.0/8,
 * `::1`, and IPv4-mapped loopback, which connects to this host) only on an
 * insecure-local server; `Local` never (`what` says why).
 *
 * @internal
 */
export type AddressClass =
  | { readonly _tag: "Public" }
  | { readonly _tag: "Loopback"; readonly what: string }
  | { readonly _tag: "Local"; readonly what: string }

const publicAddress: AddressClass = { _tag: "Public" }
const local = (what: string): AddressClass => ({ _tag: "Local", what })

const dottedQuad = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/

/**
 * The 32 bits of a dotted-quad IPv4 address (each part 0-255, as the URL parser and the
 * resolver write them), or `undefined`.
 *
 * @internal
 */
export const parseIpv4 = (text: string): number | undefined => {
  const match = dottedQuad.exec(text)
  if (match === null) return undefined
  let value = 0
  for (let i = 1; i <= 4; i++) {
    const part = Number(match[i])
    if (part > 255) return undefined
    value = value * 256 + part
  }
  return value
}

/**
 * The eight 16-bit groups of an IPv6 address (`::` compression, a dotted IPv4 tail and
 * a `%zone` allowed), or `undefined`.
 *
 * @internal
 */
export const parseIpv6 = (text: string): ReadonlyArray<number> | undefined => {
  const zone = text.indexOf("%")
  const address = zone < 0 ? text : text.slice(0, zone)
  const halves = address.split("::")
  if (halves.length > 2) return undefined
  const groupsOf = (part: string): Array<number> | undefined => {
    if (part === "") return []
    const groups: Array<number> = []
    const pieces = part.split(":")
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i]!
      if (i === pieces.length - 1 && piece.includes(".")) {
        const v4 = parseIpv4(piece)
        if (v4 === undefined) return undefined
        groups.push(Math.floor(v4 / 65536), v4 % 65536)
      } else if (/^[0-9a-f]{1,4}$/i.test(piece)) {
        groups.push(parseInt(piece, 16))
      } else {
        return undefined
      }
    }
    return groups
  }
  const head = groupsOf(halves[0]!)
  const tail = halves.length === 2 ? groupsOf(halves[1]!) : []
  if (head === undefined || tail === undefined) return undefined
  if (halves.length === 1) return head.length === 8 ? head : undefined
  const missing = 8 - head.length - tail.length
  if (missing < 1) return undefined
  return [...head, ...Array<number>(missing).fill(0), ...tail]
}

const v4Text = (value: number): string =>
  [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join(".")

const inV4 = (value: number, base: string, bits: number): boolean => {
  const start = parseIpv4(base)!
  const size = 2 ** (32 - bits)
  return value >= start && value < start + size
}

// IANA's IPv4 special-purpose registry, less what is globally reachable.
const v4Ranges: ReadonlyArray<readonly [string, number, string]> = [
  ["0.0.0.0", 8, "unspecified (this network)"],
  ["10.0.0.0", 8, "private (RFC 1918)"],
  ["100.64.0.0", 10, "carrier-grade NAT (shared)"],
  ["169.254.0.0", 16, "link-local"],
  ["172.16.0.0", 12, "private (RFC 1918)"],
  ["192.0.0.0", 24, "IETF protocol assignments"],
  ["192.0.2.0", 24, "documentation"],
  ["192.88.99.0", 24, "6to4 relay anycast"],
  ["192.168.0.0", 16, "private (RFC 1918)"],
  ["198.18.0.0", 15, "benchmarking"],
  ["198.51.100.0", 24, "documentation"],
  ["203.0.113.0", 24, "documentation"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved or broadcast"]
]

const classifyV4 = (value: number): AddressClass => {
  if (inV4(value, "127.0.0.0", 8)) return { _tag: "Loopback", what: "loopback" }
  const range = v4Ranges.find(([base, bits]) => inV4(value, base, bits))
  return range === undefined ? publicAddress : local(range[2])
}

// An IPv4 address embedded in IPv6: refused when the IPv4 address is anything but
// public (loopback included: the translator or relay would reach it, not this host).
const embedded = (how: string, value: number): AddressClass => {
  const inner = classifyV4(value)
  return inner._tag === "Public" ? publicAddress : local(`${how} of ${v4Text(value)} (${inner.what})`)
}

const classifyV6 = (g: ReadonlyArray<number>): AddressClass => {
  const v4At = (i: number): number => g[i]! * 65536 + g[i + 1]!
  const zeros = (from: number, to: number): boolean => g.slice(from, to).every((group) => group === 0)
  if (zeros(0, 5) && g[5] === 0xffff) {
    // IPv4-mapped: the socket connects to the IPv4 address itself
    const inner = classifyV4(v4At(6))
    return inner._tag === "Public"
      ? publicAddress
      : { ...inner, what: `IPv4-mapped ${v4Text(v4At(6))} (${inner.what})` }
  }
  if (zeros(0, 6)) {
    if (g[6] === 0 && g[7] === 0) return local("unspecified")
    if (g[6] === 0 && g[7] === 1) return { _tag: "Loopback", what: "loopback" }
    return local(`IPv4-compatible ${v4Text(v4At(6))} (deprecated)`)
  }
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return embedded("IPv4-translated", v4At(6))
  if (g[0] === 0x64 && g[1] === 0xff9b) {
    if (zeros(2, 6)) return embedded("NAT64", v4At(6))
    if (g[2] === 1) return local("local-use NAT64 (64:ff9b:1::/48)")
  }
  if (g[0] === 0x2002) return embedded("6to4", v4At(1))
  if (g[0] === 0x2001 && g[1] === 0) {
    const server = embedded("Teredo server", v4At(2))
    if (server._tag !== "Public") return server
    // the client's address is stored inverted
    return embedded("Teredo client", (~v4At(6)) >>> 0)
  }
  if (g[0] === 0x2001 && g[1] === 0xdb8) return local("documentation")
  if (g[0] === 0x2001 && g[1] === 2 && g[2] === 0) return local("benchmarking")
  if (g[0] === 0x2001 && ((g[1]! & 0xfff0) === 0x10 || (g[1]! & 0xfff0) === 0x20)) return local("ORCHID")
  if ((g[0]! & 0xfff0) === 0x3ff0) return local("documentation")
  if ((g[0]! & 0xfe00) === 0xfc00) return local("unique-local")
  if ((g[0]! & 0xffc0) === 0xfe80) return local("link-local")
  if ((g[0]! & 0xffc0) === 0xfec0) return local("site-local")
  if ((g[0]! & 0xff00) === 0xff00) return local("multicast")
  // global unicast is 2000::/3; everything else is special or unassigned
  return (g[0]! & 0xe000) === 0x2000 ? publicAddress : local("not global unicast")
}

/**
 * What an IP address (IPv4 dotted quad or IPv6, with or without brackets) is to a
 * webhook, or `undefined` when the text is not an IP address.
 *
 * @internal
 */
export const classifyAddress = (address: string): AddressClass | undefined => {
  const text = address.toLowerCase().replace(/^\[|\]$/g, "")
  const v4 = parseIpv4(text)
  if (v4 !== undefined) return classifyV4(v4)
  if (!text.includes(":")) return undefined
  const v6 = parseIpv6(text)
  return v6 === undefined ? undefined : classifyV6(v6)
}

/**
 * Why a webhook may not connect to an IP address under a policy (loopback only on an
 * insecure-local server), or `undefined` when it may. A text that is no IP address is
 * refused.
 *
 * @internal
 */
export const addressRefusal = (address: string, policy: Pick<WebhookPolicy, "loopbackHttp">): string | undefined => {
  const found = classifyAddress(address)
  if (found === undefined) return `${address} is not an IP address`
  if (found._tag === "Public" || (found._tag === "Loopback" && policy.loopbackHttp)) return undefined
  return `${address} is ${found.what}: a private, loopback or link-local address`
}

/**
 * A host as compared: lower case, without brackets or trailing dots (`LOCALHOST.` is
 * `localhost`).
 *
 * @internal
 */
export const normalHost = (host: string): string => host.toLowerCase().replace(/^\[|\]$/g, "").replace(/\.+$/, "")

const localSuffixes = [
  ".localhost",
  ".local",
  ".internal",
  ".home.arpa",
  ".localdomain",
  ".lan",
  ".intranet",
  ".corp",
  ".home",
  ".private"
]

/**
 * Whether a host name is local by its name, whatever its case and trailing dots: a
 * single label (`localhost`, `metadata`: resolved through the local search domains),
 * or a local-use suffix (`.localhost`, `.local`, `.internal`, `.home.arpa`,
 * `.localdomain`, and RFC 6762's `.lan`, `.intranet`, `.corp`, `.home`, `.private`).
 *
 * @internal
 */
export const isLocalName = (host: string): boolean => {
  const name = normalHost(host)
  return !name.includes(".") || localSuffixes.some((suffix) => name.endsWith(suffix))
}

// The host and port of an allow-list entry (`host`, `host:port`, `[v6]`, `[v6]:port`).
const allowedEntryOf = (entry: string): { readonly host: string; readonly port: string | undefined } => {
  const lower = entry.toLowerCase()
  if (lower.startsWith("[")) {
    const end = lower.indexOf("]")
    const rest = lower.slice(end + 1)
    return { host: normalHost(lower.slice(0, end + 1)), port: rest.startsWith(":") ? rest.slice(1) : undefined }
  }
  const colon = lower.lastIndexOf(":")
  return colon === -1 || lower.indexOf(":") !== colon
    ? { host: normalHost(lower), port: undefined }
    : { host: normalHost(lower.slice(0, colon)), port: lower.slice(colon + 1) }
}

/**
 * Whether the allow-list names a host, compared as `normalHost` does. An entry with a
 * port names that port of the host only: given the URL's `port` (`""` for the
 * scheme's default), it must be the same; without one (a connection's lookup, which
 * knows no port: the URL's port was checked when it was accepted), any port matches.
 *
 * @internal
 */
export const isAllowedHost = (
  policy: Pick<WebhookPolicy, "allowHosts">,
  host: string,
  port?: string | undefined
): boolean => {
  const name = normalHost(host)
  return policy.allowHosts.some((entry) => {
    const allowed = allowedEntryOf(entry)
    return allowed.host === name && (allowed.port === undefined || port === undefined || allowed.port === port)
  })
}

/**
 * What to do about a webhook URL's host before a post: nothing (`Allowed`: the
 * allow-list names it, or its IP address may be reached), refuse (`Refused`: a local
 * name, or an IP address that may not be reached, in whatever form it is written), or
 * resolve the name and check its addresses (`Resolve`).
 *
 * @internal
 */
export type WebhookTarget =
  | { readonly _tag: "Allowed" }
  | { readonly _tag: "Refused"; readonly reason: string }
  | { readonly _tag: "Resolve"; readonly host: string }

/**
 * The target of a webhook URL (see `WebhookTarget`); a URL that does not parse is
 * refused.
 *
 * @internal
 */
export const webhookTarget = (raw: string, policy: WebhookPolicy): WebhookTarget => {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return { _tag: "Refused", reason: "webhook.url is not a URL" }
  }
  const host = normalHost(url.hostname)
  if (isAllowedHost(policy, host, url.port)) return { _tag: "Allowed" }
  if (isIP(host) !== 0) {
    const refusal = addressRefusal(host, policy)
    return refusal === undefined ? { _tag: "Allowed" } : { _tag: "Refused", reason: refusal }
  }
  if (isLocalName(host)) {
    return policy.loopbackHttp && (host === "localhost" || host.endsWith(".localhost"))
      ? { _tag: "Allowed" }
      : { _tag: "Refused", reason: `${url.hostname} is a local name` }
  }
  return { _tag: "Resolve", host }
}
