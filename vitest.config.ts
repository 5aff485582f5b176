import { defineConfig } from "vitest/config"
import projects from "./vitest.workspace.js"

export default defineConfig({
  test: {
    projects,
    reporters: ["default", "./scripts/vitest-summary.ts"],
    // Measured on a 2-core machine with two busy loops beside the suite: worker
    // threads, two at a time, 280 s; forks, two at a time, 297 s; forks 3, 319 s;
    // forks 1 (Vitest's default there), 716 s. Threads were fastest, but with more
    // load beside them two of three runs ended on Vitest's fixed 60 s worker RPC
    // timeout ("Timeout calling onTaskUpdate", every test passed): the threads share
    // the orchestrator's process. Forks, two at a time, cost 6% more and keep each
    // worker in a process of its own.
    pool: "forks",
    maxWorkers: 2
  }
})
