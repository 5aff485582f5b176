/**
 * Every connection the webhook client opens is checked where it is opened, by its
 * agents (`GuardedHttpAgent`, `GuardedHttpsAgent`): a redirect, were the client to
 * follow one, to an IP address of this host is refused like the first request's host.
 *
 * And why the guard is Sluice's own rather than request-filtering-agent's (measured in
 * `pnpm bench handwritten`): plugged into the same agent hook, that library refuses
 * every receiver whose name resolves through DNS64 (`64:ff9b::/96`, the addresses an
 * IPv6-only host sees for an IPv4-only receiver), which Sluice's guard lets through
 * while refusing NAT64 forms of local addresses.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Result from "effect/Result"
import type { LookupAddress } from "node:dns"
import { once } from "node:events"
import * as http from "node:http"
import { type LookupFunction, Socket } from "node:net"
import { RequestFilteringHttpAgent } from "request-filtering-agent"
import type { WebhookPolicy } from "../src/internal/subscriptionWire.js"
import { addressRefusal } from "../src/internal/webhookAddress.js"
import {
  GuardedHttpAgent,
  GuardedHttpsAgent,
  guardedLookup,
  type Resolve,
  webhookClient
} from "../src/internal/webhookLookup.js"
import { receiver } from "./support/receiver.js"

const strict: WebhookPolicy = { loopbackHttp: false, allowHosts: [] }

// What a failed request's socket said (the guard's refusal), else the error's message.
const causeOf = (error: HttpClientError.HttpClientError): string => {
  const cause = "cause" in error.reason ? error.reason.cause : undefined
  return cause instanceof Error ? cause.message : error.message
}

// The connection an agent opens to `host`, until the guard refuses it: its error (a
// connection that got past the guard fails otherwise, or not at all).
const connection = (agent: http.Agent, host: string, lookup?: LookupFunction) =>
  Effect.callback<Error>((resume) => {
    const made = agent.createConnection({ host, port: 9, ...(lookup === undefined ? {} : { lookup }) }, (error) => {
      if (error instanceof Error) resume(Effect.succeed(error))
    })
    if (made instanceof Socket) made.on("error", (error) => resume(Effect.succeed(error)))
  })

const answering = (addresses: ReadonlyArray<string>) => {
  const found: Array<LookupAddress> = addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }))
  const resolve: Resolve = (_hostname, _options, callback) => callback(null, found)
  const lookup: LookupFunction = (_hostname, options, callback) =>
    options.all === true ? callback(null, found) : callback(null, found[0]!.address, found[0]!.family)
  return { resolve, lookup }
}

describe("the webhook client's agents", () => {
  it.live(
    "a followed redirect to this host's address is refused at its connection; the first request reached the receiver",
    () =>
      Effect.gen(function*() {
        const { connections, port } = yield* receiver
        const client = webhookClient({ loopbackHttp: false, allowHosts: [`127.0.0.1:${port}`] })
        const answer = yield* Effect.gen(function*() {
          const following = HttpClient.followRedirects(yield* HttpClient.HttpClient)
          const response = yield* following.execute(HttpClientRequest.get(`http://127.0.0.1:${port}/redirect`))
          return response.status
        }).pipe(Effect.scoped, Effect.result, Effect.provide(client))
        expect(Result.isFailure(answer) && causeOf(answer.failure)).toBe(
          "the webhook host ::ffff:7f00:1 is IPv4-mapped 127.0.0.1 (loopback): a private, loopback or link-local address"
        )
        expect(connections()).toBe(1)
      }).pipe(Effect.scoped),
    30_000
  )

  it.effect(
    "refuse an IP-address host before connecting, through the callback or on the socket",
    () =>
      Effect.gen(function*() {
        const viaCallback = yield* connection(new GuardedHttpsAgent(strict), "::ffff:7f00:1")
        expect(viaCallback.message).toBe(
          "the webhook host ::ffff:7f00:1 is IPv4-mapped 127.0.0.1 (loopback): a private, loopback or link-local address"
        )
        const socket = new GuardedHttpAgent(strict).createConnection({ host: "169.254.169.254", port: 80 })
        expect(socket).toBeInstanceOf(Socket)
        if (!(socket instanceof Socket)) return
        const [error]: Array<unknown> = yield* Effect.promise(() => once(socket, "error"))
        expect(error).toMatchObject({
          message: expect.stringContaining("169.254.169.254 is link-local"),
          code: "EADDRNOTAVAIL"
        })
      }),
    10_000
  )
})

describe("why the guard is Sluice's own: request-filtering-agent on the same agent hook", () => {
  it.effect(
    "a receiver's name through DNS64 passes Sluice's guard; request-filtering-agent refuses it",
    () =>
      Effect.gen(function*() {
        const dns64 = answering(["64:ff9b::5db8:d822"]) // 93.184.216.34 as an IPv6-only host sees it
        const ours = yield* Effect.callback<unknown>((resume) =>
          guardedLookup(strict, dns64.resolve)(
            "hooks.example.com",
            { all: true },
            (error, addresses) => resume(Effect.succeed(error ?? addresses))
          )
        )
        expect(ours).toStrictEqual([{ address: "64:ff9b::5db8:d822", family: 6 }])
        const theirs = yield* connection(new RequestFilteringHttpAgent(), "hooks.example.com", dns64.lookup)
        expect(theirs.message).toContain("64:ff9b::5db8:d822")
        expect(theirs.message).toContain("is not allowed")
        // NAT64 of a local address stays refused by Sluice's
        expect(addressRefusal("64:ff9b::a9fe:a9fe", strict)).toContain("NAT64 of 169.254.169.254")
      }),
    10_000
  )
})
