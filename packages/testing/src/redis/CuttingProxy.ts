/**
 * A TCP proxy on loopback that cuts connections mid-write. Connection `i` forwards
 * `budgets[i]` bytes from the client, then cuts: on odd cuts the last chunk reaches
 * Redis whole and the client never sees the reply (a write that landed with its
 * reply lost); on even cuts only part of it does (a command torn in half). After
 * `maxCuts` cuts it forwards everything.
 */
import { connect, createServer, type Server, type Socket } from "node:net"

/**
 * A running cutting proxy: its URL, how many cuts it made, and `close`.
 *
 * @since 0.3.0
 */
export interface CuttingProxy {
  readonly url: string
  readonly cuts: () => number
  readonly close: () => Promise<void>
}

/**
 * Starts a proxy to `targetPort` that cuts connection `i` after `budgets[i]` bytes, `maxCuts` times.
 *
 * @since 0.3.0
 */
export const startCuttingProxy = (
  targetPort: number,
  budgets: ReadonlyArray<number>,
  maxCuts: number
): Promise<CuttingProxy> =>
  new Promise((resolve, reject) => {
    let connections = 0
    let cuts = 0
    const sockets = new Set<Socket>()
    const server: Server = createServer((client) => {
      const upstream = connect(targetPort, "127.0.0.1")
      sockets.add(client).add(upstream)
      client.once("close", () => sockets.delete(client))
      upstream.once("close", () => sockets.delete(upstream))
      let budget = cuts < maxCuts ? budgets[connections % budgets.length]! : Infinity
      connections++
      client.on("data", (data: Buffer) => {
        if (data.length < budget) {
          budget -= data.length
          upstream.write(data)
          return
        }
        cuts++
        const whole = cuts % 2 === 1
        upstream.end(whole ? data : data.subarray(0, Math.max(0, budget - 1)))
        client.destroy()
      })
      upstream.on("data", (data: Buffer) => {
        if (!client.destroyed) client.write(data)
      })
      client.on("error", () => upstream.destroy())
      upstream.on("error", () => client.destroy())
      client.on("close", () => upstream.end())
      upstream.on("close", () => client.destroy())
    })
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      resolve({
        url: `redis://127.0.0.1:${port}`,
        cuts: () => cuts,
        close: () =>
          new Promise((done) => {
            for (const socket of sockets) socket.destroy()
            server.close(() => done())
          })
      })
    })
  })
