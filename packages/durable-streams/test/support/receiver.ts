/**
 * A webhook receiver for the address-guard tests: an HTTP server on every loopback
 * address (both families) that counts the connections it gets. Every request is
 * answered `{}` with 200, except `/redirect`, which sends the client to the IPv4-mapped
 * form of 127.0.0.1 on the same port (this host again, by a literal address).
 */
import * as Effect from "effect/Effect"
import * as http from "node:http"

/** A receiver, closed with its scope. */
export const receiver = Effect.acquireRelease(
  Effect.callback<{ readonly port: number; readonly connections: () => number; readonly server: http.Server }>(
    (resume) => {
      let connections = 0
      const portOf = () => {
        const address = server.address()
        return typeof address === "object" && address !== null ? address.port : 0
      }
      const server = http.createServer((request, response) => {
        if (request.url === "/redirect") {
          response.writeHead(307, { location: `http://[::ffff:127.0.0.1]:${portOf()}/hook` })
        }
        response.end("{}")
      })
      server.on("connection", () => {
        connections++
      })
      server.listen(0, "::", () => resume(Effect.succeed({ port: portOf(), connections: () => connections, server })))
    }
  ),
  ({ server }) =>
    Effect.callback<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
)
