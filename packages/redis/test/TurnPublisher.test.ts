import { inject } from "vitest"
import * as RedisStreamsLive from "../src/RedisStreamsLive.js"
import * as RedisStreamsMemory from "../src/RedisStreamsMemory.js"
import { publisherSuite } from "./support/publisherSuite.js"

publisherSuite("TurnPublisher on RedisStreamsLive", RedisStreamsLive.layerFrom({ url: inject("redisUrl") }))
publisherSuite("TurnPublisher on RedisStreamsMemory", RedisStreamsMemory.layer)
