import { inject } from "vitest"
import * as RedisStreamsLive from "../src/RedisStreamsLive.js"
import * as RedisStreamsMemory from "../src/RedisStreamsMemory.js"
import { lifecycleSuite } from "./support/lifecycleSuite.js"

lifecycleSuite("turn lifecycle on RedisStreamsLive", RedisStreamsLive.layerFrom({ url: inject("redisUrl") }))
lifecycleSuite("turn lifecycle on RedisStreamsMemory", RedisStreamsMemory.layer)
