import { sluiceProject } from "@sluice/testing/vitest"

export default sluiceProject("server", {
  // The redis package's setup: one redis-server on a free loopback port in a
  // temporary directory (or REDIS_URL), handed to tests as inject("redisUrl").
  globalSetup: ["@sluice/testing/redis/globalSetup"]
})
