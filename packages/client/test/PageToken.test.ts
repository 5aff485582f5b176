/**
 * A page's signed token goes in `?access_token=` (the server takes page tokens only
 * there), on every request: the snapshot, the feed, a cancel, the list of turns; a
 * bearer token still goes in `Authorization`. `listTurns` reads `GET /v1/turns` and
 * holds the body to the list's shape.
 */
import { describe, expect, it } from "@effect/vitest"
import { cancel, followTurn, listTurns, Wire } from "../src/index.js"

const turnId = "6f1c2b7e-0c3a-4d5e-8f90-1a2b3c4d5e6f"
const base = "http://sluice.test/"
const pageToken = "v1.1700000000000.control.bWFj"

interface Recorded {
  readonly url: string
  readonly method: string
  readonly authorization: string | null
}

const scripted = (replies: Array<() => Response>) => {
  const requests: Array<Recorded> = []
  const fetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    requests.push({
      url: String(input),
      method: init?.method ?? "GET",
      authorization: new Headers(init?.headers).get("authorization")
    })
    const next = replies.shift()
    return next === undefined ? Promise.reject(new Error("no more replies")) : Promise.resolve(next())
  }
  return { fetch: fetch as typeof globalThis.fetch, requests }
}
const json = (body: unknown, status = 200) => () => new Response(JSON.stringify(body), { status })
const sse = (text: string) => () =>
  new Response(text, { status: 200, headers: { "content-type": "text/event-stream" } })
const noWait = { sleep: () => Promise.resolve(), random: () => 0.5 }
const query = (url: string) => Object.fromEntries(new URL(url).searchParams)

describe("a page token", () => {
  it("goes in ?access_token= on the snapshot, the feed and a cancel, never in Authorization", async () => {
    const completed = { type: "turn_completed", turnId, status: "complete" }
    const { fetch, requests } = scripted([
      json({ turnId, status: "streaming", items: [], lastEventId: "0-1" }),
      sse(`id: 0-2\nevent: turn_event\ndata: ${JSON.stringify(completed)}\n\n`),
      json({ turnId, cancel: "requested" }, 202)
    ])
    const final = await followTurn(base, turnId, { accessToken: pageToken, fetch, ...noWait }).done
    expect([final.connection, final.status]).toStrictEqual(["finished", "complete"])
    await cancel(base, turnId, { accessToken: pageToken, fetch })
    expect(requests.map((request) => [request.method, new URL(request.url).pathname, query(request.url)]))
      .toStrictEqual([
        ["GET", `/v1/turns/${turnId}`, { access_token: pageToken }],
        ["GET", `/v1/turns/${turnId}/upserts`, { access_token: pageToken }],
        ["POST", `/v1/turns/${turnId}/cancel`, { access_token: pageToken }]
      ])
    expect(requests.map((request) => request.authorization)).toStrictEqual([null, null, null])
  })

  it("a bearer token alone goes in Authorization, with no query", async () => {
    const { fetch, requests } = scripted([json({ turnId, cancel: "requested" }, 202)])
    await cancel(base, turnId, { token: "t", fetch })
    expect([requests[0]?.url, requests[0]?.authorization]).toStrictEqual([
      `http://sluice.test/v1/turns/${turnId}/cancel`,
      "Bearer t"
    ])
  })
})

describe("listTurns", () => {
  it("reads GET /v1/turns with the limit and the token; a body that is not a list is unexpected_body", async () => {
    const turns = [
      { turnId, startedAt: 1_700_000_000_000, providerId: "openai", modelId: "gpt-4.1", status: "complete" },
      { turnId: "7a1c2b7e-0c3a-4d5e-8f90-1a2b3c4d5e6f", startedAt: 1_699_999_000_000 }
    ]
    const { fetch, requests } = scripted([
      json({ turns }),
      json({ turns: [{ turnId }] }),
      json({ error: { code: "unauthorized", message: "invalid bearer token" } }, 401)
    ])
    expect(await listTurns(base, { accessToken: pageToken, limit: 50, fetch })).toStrictEqual({ turns })
    expect([new URL(requests[0]!.url).pathname, query(requests[0]!.url)]).toStrictEqual([
      "/v1/turns",
      { limit: "50", access_token: pageToken }
    ])
    await expect(listTurns(base, { fetch })).rejects.toMatchObject({ code: "unexpected_body", status: 200 })
    expect(requests[1]?.url).toBe("http://sluice.test/v1/turns")
    await expect(listTurns(base, { token: "x", fetch })).rejects.toMatchObject({ code: "unauthorized", status: 401 })
  })

  it("Wire.isTurnList holds a body to the list's shape", () => {
    expect([
      Wire.isTurnList({ turns: [] }),
      Wire.isTurnList({ turns: [{ turnId, startedAt: 1 }] }),
      Wire.isTurnList({ turns: [{}] }),
      Wire.isTurnList({ turns: [{ turnId, startedAt: 1, status: "lost" }] }),
      Wire.isTurnList(null)
    ]).toStrictEqual([true, true, false, false, false])
  })
})
