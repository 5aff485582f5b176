import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "redis",
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/globalSetup.ts"]
  }
})
