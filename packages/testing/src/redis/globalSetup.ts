/**
 * Starts one `redis-server` for the package's tests (or uses `REDIS_URL` when it is
 * set) and hands its URL to the tests as `inject("redisUrl")`.
 */
import type { TestProject } from "vitest/node"
import { startRedisServer } from "./RedisServer.js"

declare module "vitest" {
  export interface ProvidedContext {
    redisUrl: string
  }
}

/**
 * Vitest's global setup: one `redis-server` (or `REDIS_URL`) as `inject("redisUrl")`; stops it afterwards.
 *
 * @since 0.3.0
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env.REDIS_URL
  if (external !== undefined && external !== "") {
    project.provide("redisUrl", external)
    return async () => {}
  }
  const server = await startRedisServer()
  project.provide("redisUrl", server.url)
  return () => server.close()
}
