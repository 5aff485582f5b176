/**
 * A vitest reporter that ends the run with one plain line, `tests: N passed, N failed`
 * (and `, N skipped` when any were), which CI reads as the run's verdict.
 */
import type { Reporter, TestModule } from "vitest/node"

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0
    let failed = 0
    let skipped = 0
    for (const module of testModules) {
      if (module.state() === "failed" && [...module.children.allTests()].length === 0) failed++
      for (const test of module.children.allTests()) {
        const state = test.result().state
        if (state === "passed") passed++
        else if (state === "failed") {
          failed++
          process.stdout.write(`FAILED ${test.fullName}\n`)
        } else skipped++
      }
    }
    process.stdout.write(`\ntests: ${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}\n`)
  }
}
