/**
 * What a reader of the SSE endpoints sees, on the in-memory store and on a real
 * redis-server (the global setup's, or REDIS_URL).
 *
 * Each suite is a `layer` of its own: @effect/vitest's `layer` rebinds `it` for the
 * file, so suites with layers live apart from tests on the TestClock.
 */
import { RedisStreamsLive, RedisStreamsMemory } from "@sluice/redis"
import { inject } from "vitest"
import { readerSuite } from "./support/readerSuite.js"

readerSuite("SSE readers on RedisStreamsMemory", RedisStreamsMemory.layer)
readerSuite("SSE readers on redis-server", RedisStreamsLive.layer({ url: inject("redisUrl") }))
