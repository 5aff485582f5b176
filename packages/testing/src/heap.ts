import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"

// `gc` made available to the tests that count heap, without a flag on the whole run
setFlagsFromString("--expose-gc")
const collect: unknown = runInNewContext("gc")

/**
 * The heap in use after two full collections, for tests that count what something
 * keeps (never how long it takes).
 *
 * @since 0.3.0
 */
export const heapAfterCollection = (): number => {
  if (typeof collect !== "function") throw new Error("the engine gave no gc function")
  collect()
  collect()
  return process.memoryUsage().heapUsed
}
