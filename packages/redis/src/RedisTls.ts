/**
 * TLS settings of a Redis connection, shared by every client Sluice opens (ioredis's
 * command and tail connections, the batch connection, a cluster's nodes, Sentinel).
 *
 * @since 0.1.0
 */
import type * as Tls from "node:tls"

/**
 * - `ca`: the certificate authority to trust (PEM), instead of Node's default list;
 * - `servername`: the name the server's certificate must carry (SNI), when it is not
 *   the host connected to (an IP address, a node announced by a cluster);
 * - `rejectUnauthorized`: `false` accepts a certificate that fails verification (for
 *   a test setup only; the default is `true`).
 *
 * @since 0.1.0
 * @category models
 */
export interface TlsOptions {
  readonly ca?: string | Buffer | undefined
  readonly servername?: string | undefined
  readonly rejectUnauthorized?: boolean | undefined
}

/**
 * The settings as Node's `tls.connect` options, leaving out what is not set.
 *
 * @since 0.1.0
 * @category conversions
 */
export const toConnectionOptions = (options: TlsOptions): Tls.ConnectionOptions => ({
  ...(options.ca === undefined ? {} : { ca: options.ca }),
  ...(options.servername === undefined ? {} : { servername: options.servername }),
  ...(options.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: options.rejectUnauthorized })
})
