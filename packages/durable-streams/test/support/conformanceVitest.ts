/**
 * The `vitest` the conformance suite sees: this workspace's, so that the suite's tests
 * register with the runner that runs this package's tests. Every group runs.
 */
export * from "vitest"
