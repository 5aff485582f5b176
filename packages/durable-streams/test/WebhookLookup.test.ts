/**
 * The lookup of the webhook client's connections: a name that resolves to a private,
 * loopback or link-local address is refused where the socket connects (so a name cannot
 * pass the check before a post and connect elsewhere), unless the allow-list names it;
 * an insecure-local server may reach loopback.
 */
import { describe, expect, it } from "@effect/vitest"
import type { LookupAddress, LookupOptions } from "node:dns"
import type { WebhookPolicy } from "../src/internal/subscriptionWire.js"
import { guardedLookup, type Resolve } from "../src/internal/webhookLookup.js"

const answers: Record<string, ReadonlyArray<LookupAddress>> = {
  "hooks.example.com": [{ address: "93.184.216.34", family: 4 }, { address: "2606:2800:220:1::1", family: 6 }],
  "rebound.example.com": [{ address: "93.184.216.34", family: 4 }, { address: "169.254.169.254", family: 4 }],
  "inside.example.com": [{ address: "10.1.2.3", family: 4 }],
  "loop.example.com": [{ address: "127.0.0.1", family: 4 }]
}

const resolve: Resolve = (hostname, _options, callback) => {
  const found = answers[hostname]
  if (found === undefined) {
    const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`)
    error.code = "ENOTFOUND"
    return callback(error, [])
  }
  callback(null, [...found])
}

interface Looked {
  readonly error: NodeJS.ErrnoException | null
  readonly address: string | ReadonlyArray<LookupAddress>
  readonly family: number | undefined
}

const look = (policy: WebhookPolicy, host: string, options: LookupOptions = {}) =>
  new Promise<Looked>((done) =>
    guardedLookup(policy, resolve)(host, options, (error, address, family) => done({ error, address, family }))
  )

const strict: WebhookPolicy = { loopbackHttp: false, allowHosts: [] }

describe("guardedLookup", () => {
  it("passes a public name's addresses on, as one address or all of them", async () => {
    const one = await look(strict, "hooks.example.com")
    expect(one).toStrictEqual({ error: null, address: "93.184.216.34", family: 4 })
    const all = await look(strict, "Hooks.Example.com", { all: true })
    expect(all.error).toBeNull()
    expect(all.address).toStrictEqual(answers["hooks.example.com"])
  })

  it("refuses a name with any private, link-local or loopback address, naming both", async () => {
    for (
      const [host, address] of [
        ["rebound.example.com", "169.254.169.254"],
        ["inside.example.com", "10.1.2.3"],
        ["loop.example.com", "127.0.0.1"]
      ] as const
    ) {
      const refused = await look(strict, host, { all: true })
      expect(refused.error?.code).toBe("EADDRNOTAVAIL")
      expect(refused.error?.message).toBe(`${host} resolves to ${address}, a private, loopback or link-local address`)
    }
  })

  it("lets the allow-list's hosts (with or without a port) reach private addresses", async () => {
    const policy: WebhookPolicy = {
      loopbackHttp: false,
      allowHosts: ["inside.example.com:8443", "REBOUND.example.com"]
    }
    expect(await look(policy, "inside.example.com")).toStrictEqual({ error: null, address: "10.1.2.3", family: 4 })
    expect((await look(policy, "rebound.example.com", { all: true })).error).toBeNull()
    expect((await look(policy, "loop.example.com")).error?.code).toBe("EADDRNOTAVAIL")
  })

  it("on an insecure-local server, loopback only", async () => {
    const local: WebhookPolicy = { loopbackHttp: true, allowHosts: [] }
    expect(await look(local, "loop.example.com")).toStrictEqual({ error: null, address: "127.0.0.1", family: 4 })
    expect((await look(local, "inside.example.com")).error?.code).toBe("EADDRNOTAVAIL")
  })

  it("passes a resolver's failure on", async () => {
    expect((await look(strict, "nowhere.example.com")).error?.code).toBe("ENOTFOUND")
  })
})
