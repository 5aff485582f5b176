import * as RedisStreamsLive from "@sluice/redis/RedisStreamsLive"
import * as RedisStreamsMemory from "@sluice/redis/RedisStreamsMemory"
import { inject } from "vitest"
import { publisherSuite } from "./support/publisherSuite.js"

publisherSuite("TurnPublisher on RedisStreamsLive", RedisStreamsLive.layer({ url: inject("redisUrl") }))
publisherSuite("TurnPublisher on RedisStreamsMemory", RedisStreamsMemory.layer)
