import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "server",
    include: ["test/**/*.test.ts"],
    // The redis package's setup: one redis-server on a free loopback port in a
    // temporary directory (or REDIS_URL), handed to tests as inject("redisUrl").
    globalSetup: ["../redis/test/support/globalSetup.ts"]
  }
})
