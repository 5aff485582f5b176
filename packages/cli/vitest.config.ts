import { sluiceProject } from "@sluice/testing/vitest"

export default sluiceProject("cli", {
  // the redis package's setup: one redis-server for the tests, as inject("redisUrl")
  globalSetup: ["@sluice/testing/redis/globalSetup"]
})
