/**
 * Webhook targets in every form an address can take: `LOCALHOST.`, IPv4-mapped and
 * -compatible, NAT64 (`64:ff9b::/96`, `64:ff9b:1::/48`), 6to4, Teredo, unique-local,
 * link-local, unspecified. Refused when a subscription is created, before a post, by
 * the guarded lookup, and by the webhook client before it connects to an IP address
 * (which Node does without a lookup): a real receiver on loopback counts the
 * connections it gets.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import type { LookupAddress } from "node:dns"
import * as DurableStoreMemory from "../src/DurableStoreMemory.js"
import * as DurableStreams from "../src/DurableStreams.js"
import * as DurableSubscriptions from "../src/DurableSubscriptions.js"
import * as SubscriptionEngine from "../src/internal/subscriptionEngine.js"
import type { WebhookPolicy } from "../src/internal/subscriptionWire.js"
import { addressRefusal, classifyAddress, isLocalName, webhookTarget } from "../src/internal/webhookAddress.js"
import { guardedLookup, literalRefusal, type Resolve, webhookClient } from "../src/internal/webhookLookup.js"
import { receiver } from "./support/receiver.js"
import { serve } from "./support/routes.js"

const strict: WebhookPolicy = { loopbackHttp: false, allowHosts: [] }
const insecureLocal: WebhookPolicy = { loopbackHttp: true, allowHosts: [] }

// Every form of a local address the run and the special-purpose registries name.
const localAddresses = [
  "127.0.0.1",
  "127.255.0.9",
  "0.0.0.0",
  "10.9.8.7",
  "100.64.0.1",
  "169.254.169.254",
  "172.31.255.255",
  "192.0.0.170",
  "192.168.1.1",
  "198.18.0.1",
  "224.0.0.1",
  "255.255.255.255",
  "::",
  "::1",
  "[::1]",
  "::ffff:127.0.0.1",
  "::ffff:7f00:1",
  "::FFFF:A9FE:A9FE",
  "::ffff:10.0.0.1",
  "::127.0.0.1",
  "::7f00:1",
  "::ffff:0:7f00:1",
  "64:ff9b::7f00:1",
  "64:ff9b::127.0.0.1",
  "64:ff9b::a9fe:a9fe",
  "64:ff9b::c0a8:101",
  "64:ff9b:1::808:808",
  "64:ff9b:1:ffff::1",
  "2002:7f00:1::",
  "2002:7f00:0001:0:0:0:0:1",
  "2002:a00:1::1",
  "2002:a9fe:a9fe::",
  "2001:0:4136:e378:8000:63bf:80ff:fffe",
  "2001:0:7f00:1:0:0:8.8.8.8",
  "2001:db8::1",
  "3fff::1",
  "fc00::1",
  "fd12:3456:789a::1",
  "fe80::1",
  "fe80::1%eth0",
  "febf::1",
  "fec0::1",
  "ff02::1",
  "100::1",
  "::2"
]

// Public addresses, in those forms too.
const publicAddresses = [
  "8.8.8.8",
  "93.184.216.34",
  "2606:4700:4700::1111",
  "2a00:1450:4001:80b::200e",
  "::ffff:8.8.8.8",
  "::ffff:808:808",
  "64:ff9b::808:808",
  "64:ff9b::8.8.8.8",
  "2002:808:808::1",
  "2001:0:4136:e378:8000:63bf:f7f7:f7f7"
]

describe("webhook addresses, classified", () => {
  it("every local form is refused, whatever its spelling; public ones pass", () => {
    const refused = localAddresses.filter((address) => addressRefusal(address, strict) !== undefined)
    expect(refused).toStrictEqual(localAddresses)
    const passed = publicAddresses.filter((address) => addressRefusal(address, strict) === undefined)
    expect(passed).toStrictEqual(publicAddresses)
    expect(addressRefusal("64:ff9b::7f00:1", strict)).toBe(
      "64:ff9b::7f00:1 is NAT64 of 127.0.0.1 (loopback): a private, loopback or link-local address"
    )
    expect(addressRefusal("2002:7f00:1::", strict)).toBe(
      "2002:7f00:1:: is 6to4 of 127.0.0.1 (loopback): a private, loopback or link-local address"
    )
    expect(addressRefusal("example.com", strict)).toBe("example.com is not an IP address")
  })

  it("an insecure-local server reaches loopback itself (also IPv4-mapped), never through a translator", () => {
    for (const address of ["127.0.0.1", "::1", "::ffff:127.0.0.1", "::ffff:7f00:1"]) {
      expect([address, classifyAddress(address)?._tag]).toStrictEqual([address, "Loopback"])
      expect(addressRefusal(address, insecureLocal)).toBeUndefined()
    }
    for (const address of ["64:ff9b::7f00:1", "2002:7f00:1::", "::7f00:1", "::ffff:0:7f00:1", "10.0.0.1"]) {
      expect([address, addressRefusal(address, insecureLocal) === undefined]).toStrictEqual([address, false])
    }
  })

  it("texts that are no IP address are not classified", () => {
    for (
      const text of ["", "example.com", "1.2.3", "1.2.3.256", "::ffff:1.2.3", "1:2:3:4:5:6:7:8:9", "1::2::3", "g::1"]
    ) {
      expect([text, classifyAddress(text)]).toStrictEqual([text, undefined])
    }
  })

  it("local names whatever their case and trailing dots; single labels are local", () => {
    for (
      const name of [
        "LOCALHOST.",
        "localhost..",
        "a.LocalHost.",
        "svc.internal.",
        "printer.local",
        "metadata",
        "x.home.arpa."
      ]
    ) {
      expect([name, isLocalName(name)]).toStrictEqual([name, true])
    }
    for (const name of ["hooks.example.com", "hooks.example.com.", "localhost.example.com"]) {
      expect([name, isLocalName(name)]).toStrictEqual([name, false])
    }
  })

  it("a URL's target: refused, allowed, or a name to resolve", () => {
    expect(webhookTarget("https://LOCALHOST./h", strict)._tag).toBe("Refused")
    expect(webhookTarget("https://[64:ff9b::7f00:1]/h", strict)._tag).toBe("Refused")
    expect(webhookTarget("https://[2002:7f00:1::]/h", strict)._tag).toBe("Refused")
    expect(webhookTarget("https://[::ffff:169.254.169.254]/h", strict)._tag).toBe("Refused")
    expect(webhookTarget("https://0x7f.1/h", strict)._tag).toBe("Refused")
    expect(webhookTarget("https://127.0.0.1./h", strict)._tag).toBe("Refused")
    expect(webhookTarget("https://[64:ff9b::808:808]/h", strict)._tag).toBe("Allowed")
    expect(webhookTarget("https://Hooks.Example.com./h", strict)).toStrictEqual({
      _tag: "Resolve",
      host: "hooks.example.com"
    })
    expect(webhookTarget("http://localhost:9/h", insecureLocal)._tag).toBe("Allowed")
    expect(webhookTarget("http://[::1]:9/h", insecureLocal)._tag).toBe("Allowed")
    const allowed: WebhookPolicy = { loopbackHttp: false, allowHosts: ["10.0.0.7:8443", "HOOKS.lan"] }
    expect(webhookTarget("https://10.0.0.7:8443/h", allowed)._tag).toBe("Allowed")
    expect(webhookTarget("https://hooks.lan./h", allowed)._tag).toBe("Allowed")
    expect(webhookTarget("not a url", strict)._tag).toBe("Refused")
  })
})

const answers: Record<string, ReadonlyArray<LookupAddress>> = {
  "nat64.example.com": [{ address: "64:ff9b::a9fe:a9fe", family: 6 }],
  "sixtofour.example.com": [{ address: "93.184.216.34", family: 4 }, { address: "2002:7f00:1::", family: 6 }],
  "mapped.example.com": [{ address: "::ffff:10.0.0.1", family: 6 }],
  "public.example.com": [{ address: "64:ff9b::808:808", family: 6 }]
}

const resolve: Resolve = (hostname, _options, callback) => callback(null, [...(answers[hostname] ?? [])])

const look = (policy: WebhookPolicy, host: string) =>
  new Promise<NodeJS.ErrnoException | null>((done) =>
    guardedLookup(policy, resolve)(host, { all: true }, (error) => done(error))
  )

describe("guardedLookup, every form", () => {
  it("refuses names that resolve to NAT64, 6to4 or mapped forms of local addresses", async () => {
    for (const host of ["nat64.example.com", "sixtofour.example.com", "mapped.example.com"]) {
      const error = await look(strict, host)
      expect([host, error?.code]).toStrictEqual([host, "EADDRNOTAVAIL"])
    }
    expect(await look(strict, "public.example.com")).toBeNull()
  })

  it("the allow-list ignores case and trailing dots", async () => {
    expect(await look({ loopbackHttp: false, allowHosts: ["NAT64.example.com:8443"] }, "nat64.example.com.")).toBeNull()
  })
})

// Posts through a client; the failure's description, or the status.
const post = (layer: Layer.Layer<HttpClient.HttpClient>, url: string) =>
  HttpClient.post(url).pipe(
    Effect.flatMap((response) => Effect.as(response.text, response.status)),
    Effect.scoped,
    Effect.result,
    Effect.provide(layer)
  )

describe("the webhook client connects to no local address in any form", () => {
  it.live(
    "IP-address hosts are refused before a connection; names through the lookup; none reaches the receiver",
    () =>
      Effect.gen(function*() {
        const { connections, port } = yield* receiver
        const refusedUrls = [
          `http://127.0.0.1:${port}/h`,
          `http://[::1]:${port}/h`,
          `http://[::ffff:127.0.0.1]:${port}/h`,
          `https://[::ffff:7f00:1]:${port}/h`,
          `http://LOCALHOST.:${port}/h`,
          `http://localhost:${port}/h`,
          `https://[64:ff9b::7f00:1]:${port}/h`,
          `https://[2002:7f00:1::]:${port}/h`,
          `https://[2001:0:7f00:1::]:${port}/h`,
          `https://[fd00::1]:${port}/h`,
          `https://[fe80::1]:${port}/h`,
          `http://[::]:${port}/h`,
          `http://0.0.0.0:${port}/h`
        ]
        for (const url of refusedUrls) {
          const answer = yield* post(webhookClient(strict), url)
          expect([url, Result.isFailure(answer)]).toStrictEqual([url, true])
        }
        expect(connections()).toBe(0)
        // the literal ones fail with the address named, not with a connection error
        const nat64 = yield* post(webhookClient(strict), `https://[64:ff9b::7f00:1]:${port}/h`)
        expect(Result.isFailure(nat64) && nat64.failure.message).toContain(
          "the webhook host 64:ff9b::7f00:1 is NAT64 of 127.0.0.1 (loopback)"
        )
        // an insecure-local server reaches loopback: the receiver counts it
        expect(yield* post(webhookClient(insecureLocal), `http://127.0.0.1:${port}/h`)).toStrictEqual(
          Result.succeed(200)
        )
        expect(yield* post(webhookClient(insecureLocal), `http://[::ffff:127.0.0.1]:${port}/h`)).toStrictEqual(
          Result.succeed(200)
        )
        expect(connections()).toBe(2)
        // Node's client alone (the lookup's check only) connects to an IP-address host
        // whatever it is: what the literal check is for
        const unguarded = NodeHttpClient.layerNodeHttpOptions({ lookup: guardedLookup(strict) })
        expect(yield* post(unguarded, `http://[::ffff:127.0.0.1]:${port}/h`)).toStrictEqual(Result.succeed(200))
        expect(connections()).toBe(3)
      }).pipe(Effect.scoped),
    30_000
  )

  it("literalRefusal leaves names to the lookup and the allow-list's addresses alone", () => {
    expect(literalRefusal(strict, "hooks.example.com")).toBeUndefined()
    expect(literalRefusal(strict, "[64:ff9b::7f00:1]")).toContain("NAT64 of 127.0.0.1")
    expect(literalRefusal({ loopbackHttp: false, allowHosts: ["[fd00::7]:8443"] }, "fd00::7")).toBeUndefined()
    expect(literalRefusal(strict, undefined)).toBeUndefined()
  })
})

// Subscriptions through the protocol's routes on in-memory stores (made once, so that
// two engines can share them), with a client that records the posts it is asked for.
const stores = Effect.gen(function*() {
  const store = yield* DurableStoreMemory.make
  const subscriptions = yield* Effect.provide(
    Effect.service(DurableSubscriptions.DurableSubscriptions),
    DurableSubscriptions.layerMemory
  )
  return { store, subscriptions, posted: new Array<string>() }
})

type Stores = Effect.Success<typeof stores>

const engineOn = ({ posted, store, subscriptions }: Stores, policy: WebhookPolicy) =>
  Effect.gen(function*() {
    const client = HttpClient.make((request) =>
      Effect.sync(() => {
        posted.push(request.url)
        return HttpClientResponse.fromWeb(request, new Response("{}", { status: 200 }))
      })
    )
    const engine = yield* SubscriptionEngine.make(store, subscriptions, {
      ...SubscriptionEngine.defaultOptions,
      policy,
      lookup: () => Effect.succeed(["93.184.216.34"])
    }).pipe(Effect.provideService(HttpClient.HttpClient, client))
    const context: DurableStreams.Context = {
      store: Option.some(store),
      longPollMs: 1_000,
      closing: Effect.never,
      subscriptions: engine
    }
    const writer: DurableStreams.Access = { mayWrite: true }
    const call = (method: string, path: string, body?: unknown) =>
      Effect.flatMap(
        serve(
          context,
          HttpServerRequest.fromWeb(
            new Request(`http://127.0.0.1:8787/v1/stream/${path}`, {
              method,
              headers: { "content-type": "application/json", host: "127.0.0.1:8787" },
              ...(body === undefined ? {} : { body: JSON.stringify(body) })
            })
          ),
          Effect.succeed(writer)
        ),
        (response) =>
          Effect.promise(async () => {
            const web = HttpServerResponse.toWeb(response)
            const text = await web.text()
            const json: unknown = text === "" ? undefined : JSON.parse(text)
            return { status: web.status, json }
          })
      )
    const codeOf = (json: unknown): unknown =>
      typeof json === "object" && json !== null && "error" in json && typeof json.error === "object" &&
        json.error !== null && "code" in json.error
        ? json.error.code
        : undefined
    const create = (id: string, url: string) =>
      Effect.map(
        call("PUT", `__ds/subscriptions/${id}`, {
          type: "webhook",
          pattern: "events/*",
          webhook: { url },
          lease_ttl_ms: 1_000
        }),
        ({ json, status }) => ({ status, code: codeOf(json) })
      )
    const statusOf = (id: string) =>
      Effect.map(
        call("GET", `__ds/subscriptions/${id}`),
        ({ json }) => typeof json === "object" && json !== null && "status" in json ? json.status : undefined
      )
    return { call, create, statusOf }
  })

describe("subscriptions refuse every form of a local webhook host", () => {
  it.effect("the issue's three URLs and their kin are 400 WEBHOOK_URL_REJECTED; public ones are created", () =>
    Effect.gen(function*() {
      const { create } = yield* engineOn(yield* stores, strict)
      const refused = [
        "https://LOCALHOST./h",
        "https://[64:ff9b::7f00:1]/h",
        "https://[2002:7f00:1::]/h",
        "https://[64:ff9b:1::a00:1]/h",
        "https://[::ffff:0:a9fe:a9fe]/h",
        "https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/h",
        "https://svc.internal./h",
        "https://metadata/h",
        "https://[fe80::1]/h"
      ]
      for (const [i, url] of refused.entries()) {
        expect([url, yield* create(`r${i}`, url)]).toStrictEqual([url, { status: 400, code: "WEBHOOK_URL_REJECTED" }])
      }
      for (const [i, url] of ["https://hooks.example.com./h", "https://[64:ff9b::808:808]/h"].entries()) {
        expect([url, (yield* create(`a${i}`, url)).status]).toStrictEqual([url, 201])
      }
    }))

  it.effect("a stored subscription whose IP-address host is no longer allowed is not posted to", () =>
    Effect.gen(function*() {
      const shared = yield* stores
      // created while the allow-list named the address, by an engine now gone
      yield* Effect.scoped(Effect.gen(function*() {
        const before = yield* engineOn(shared, { loopbackHttp: false, allowHosts: ["[64:ff9b::7f00:1]"] })
        expect((yield* before.create("old", "https://[64:ff9b::7f00:1]/h")).status).toBe(201)
      }))
      const now = yield* engineOn(shared, strict)
      yield* now.call("PUT", "events/a", { n: 1 })
      for (let i = 0; i < 1_000 && (yield* now.statusOf("old")) !== "failed"; i++) yield* Effect.yieldNow
      expect(yield* now.statusOf("old")).toBe("failed")
      expect(shared.posted).toStrictEqual([])
    }))
})
