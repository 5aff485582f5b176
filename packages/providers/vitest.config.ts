import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "providers",
    include: ["test/**/*.test.ts"]
  }
})
