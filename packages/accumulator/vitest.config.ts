import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "accumulator",
    include: ["test/**/*.test.ts"]
  }
})
