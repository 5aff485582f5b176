/**
 * The version `sluice --version` prints: the package's (`Output.test.ts` holds them
 * equal, and the packaging test holds every package's version to one).
 *
 * @internal
 */
export const version = "0.3.0"
