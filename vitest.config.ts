import { defineConfig } from "vitest/config"
import projects from "./vitest.workspace.js"

export default defineConfig({
  test: {
    projects,
    reporters: ["default", "./scripts/vitest-summary.ts"],
    // Measured on a 2-core machine with two busy loops beside the suite: worker
    // threads, two at a time, were the fastest that stayed green (threads 2: 280 s,
    // forks 2: 297 s, forks 3: 319 s, forks 1, Vitest's default there: 716 s).
    pool: "threads",
    maxWorkers: 2,
    minWorkers: 1
  }
})
