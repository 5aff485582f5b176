import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "upserts",
    include: ["test/**/*.test.ts"]
  }
})
