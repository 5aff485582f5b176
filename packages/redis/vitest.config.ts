import { sluiceProject } from "@sluice/testing/vitest"

export default sluiceProject("redis", {
  globalSetup: ["@sluice/testing/redis/globalSetup"]
})
