/**
 * A `redis-server` that speaks only TLS, with a certificate authority made for it by
 * `openssl` in a temporary directory: the server's certificate names `localhost`.
 */
import { freePort, launchRedis, stop } from "@sluice/testing/redis"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { type ChildProcess, execFile } from "node:child_process"
import { mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"

const run = promisify(execFile)

export interface TlsRedisServer {
  readonly port: number
  /** The CA's certificate file, and its PEM text. */
  readonly caFile: string
  readonly ca: string
}

const makeCertificates = async (dir: string): Promise<void> => {
  const at = (name: string) => join(dir, name)
  await run("openssl", [
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "1",
    "-subj",
    "/CN=Sluice test CA",
    "-keyout",
    at("ca.key"),
    "-out",
    at("ca.crt")
  ])
  await run("openssl", [
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-subj",
    "/CN=localhost",
    "-keyout",
    at("server.key"),
    "-out",
    at("server.csr")
  ])
  await run("sh", ["-c", `printf 'subjectAltName=DNS:localhost\\n' > ${at("ext.cnf")}`])
  await run("openssl", [
    "x509",
    "-req",
    "-in",
    at("server.csr"),
    "-CA",
    at("ca.crt"),
    "-CAkey",
    at("ca.key"),
    "-CAcreateserial",
    "-days",
    "1",
    "-extfile",
    at("ext.cnf"),
    "-out",
    at("server.crt")
  ])
}

const launch = (port: number, dir: string): Promise<ChildProcess> =>
  launchRedis([
    "--port",
    "0",
    "--tls-port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--dir",
    dir,
    "--save",
    "",
    "--appendonly",
    "no",
    "--tls-cert-file",
    join(dir, "server.crt"),
    "--tls-key-file",
    join(dir, "server.key"),
    "--tls-ca-cert-file",
    join(dir, "ca.crt"),
    "--tls-auth-clients",
    "no"
  ])

/** The server and its CA for the length of a scope. */
export const scopedTlsRedisServer: Effect.Effect<TlsRedisServer, never, Scope.Scope> = Effect.acquireRelease(
  Effect.promise(async () => {
    const dir = await mkdtemp(join(tmpdir(), "sluice-tls-"))
    await makeCertificates(dir)
    const port = await freePort()
    const child = await launch(port, dir)
    const caFile = join(dir, "ca.crt")
    return { server: { port, caFile, ca: await readFile(caFile, "utf8") }, child, dir }
  }),
  ({ child, dir }) =>
    Effect.promise(async () => {
      await stop(child, "SIGTERM")
      await rm(dir, { recursive: true, force: true })
    })
).pipe(Effect.map(({ server }) => server))
