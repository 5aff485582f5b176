import { sluiceProject } from "@sluice/testing/vitest"

export default sluiceProject("effect-ai", {
  // one redis-server for the published model's tests, as inject("redisUrl")
  globalSetup: ["@sluice/testing/redis/globalSetup"]
})
