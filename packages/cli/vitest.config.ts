import { sluiceProject } from "../../scripts/vitestProject.js"

export default sluiceProject("cli", {
  // the redis package's setup: one redis-server for the tests, as inject("redisUrl")
  globalSetup: ["../redis/test/support/globalSetup.ts"]
})
