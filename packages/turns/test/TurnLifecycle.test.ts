import * as RedisStreamsLive from "@sluice/redis/RedisStreamsLive"
import * as RedisStreamsMemory from "@sluice/redis/RedisStreamsMemory"
import { inject } from "vitest"
import { lifecycleSuite } from "./support/lifecycleSuite.js"

lifecycleSuite("turn lifecycle on RedisStreamsLive", RedisStreamsLive.layer({ url: inject("redisUrl") }))
lifecycleSuite("turn lifecycle on RedisStreamsMemory", RedisStreamsMemory.layer)
