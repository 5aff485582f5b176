import { sluiceProject } from "../../scripts/vitestProject.js"

export default sluiceProject("durable-streams", {
  // The redis package's setup: one redis-server on a free loopback port in a
  // temporary directory (or REDIS_URL), handed to tests as inject("redisUrl").
  globalSetup: ["../redis/test/support/globalSetup.ts"]
})
