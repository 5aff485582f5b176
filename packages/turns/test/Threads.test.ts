import * as RedisStreamsLive from "@sluice/redis/RedisStreamsLive"
import * as RedisStreamsMemory from "@sluice/redis/RedisStreamsMemory"
import { inject } from "vitest"
import { threadsSuite } from "./support/threadsSuite.js"

threadsSuite("Threads on RedisStreamsMemory", RedisStreamsMemory.layer)
threadsSuite("Threads on RedisStreamsLive", RedisStreamsLive.layer({ url: inject("redisUrl") }))
