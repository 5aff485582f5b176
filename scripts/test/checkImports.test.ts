/**
 * `scripts/checkImports.ts` on a workspace this test writes under the system's temporary
 * directory: two packages and a bench that cross every wall the check knows (a test
 * importing the other package's test helper, a config reading the other package's
 * setup by path, a fixture read by path, a package importing `scripts/`, a bench
 * importing sources by path and an `internal/` module by name) beside the imports that
 * stay within their walls, and the repository itself, which holds only the crossings the
 * check lists as known.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { checkImports, unknown } from "../checkImports.js"

const repository = fileURLToPath(new URL("../../", import.meta.url))

const made: Array<string> = []
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const workspace = (files: Record<string, string>): string => {
  const root = mkdtempSync(join(tmpdir(), "sluice-imports-fixture-"))
  made.push(root)
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  return root
}

describe("checkImports", () => {
  it("names every string that crosses a wall, with its kind, file and line", { timeout: 30_000 }, () => {
    const root = workspace({
      "packages/a/src/index.ts": [
        `import { b } from "@sluice/b"`,
        `import { helper } from "./internal/helper.js"`,
        `export const a = b + helper`
      ].join("\n"),
      "packages/a/src/internal/helper.ts": `export const helper = 1\n`,
      "packages/a/test/A.test.ts": [
        `import { serve } from "@sluice/testing/redis"`,
        `import { a } from "../src/index.js"`,
        `import { turns } from "../../b/test/support/turns.js"`,
        `const sse = new URL("../../b/test/fixtures/text.sse", import.meta.url)`,
        `const sleeps = await import("../../../scripts/testClockSleeps.js")`,
        `const text = "../not/a/path/anywhere"`
      ].join("\n"),
      "packages/a/vitest.config.ts": `export default { globalSetup: ["../b/test/support/globalSetup.ts"] }\n`,
      "packages/b/src/index.ts": `export const b = 2\n`,
      "packages/b/src/internal/resp.ts": `export const resp = 3\n`,
      "scripts/bench/b.ts": [
        `import { b } from "@sluice/b"`,
        `import { resp } from "@sluice/b/internal/resp"`,
        `import { a } from "../../packages/a/src/index.js"`,
        `import { shared } from "./shared.js"`
      ].join("\n"),
      "scripts/bench/shared.ts": `export const shared = 4\n`
    })
    const found = checkImports(root).map(({ file, kind, line, specifier }) => ({ file, kind, line, specifier }))
    expect(found).toEqual([
      { file: "packages/a/test/A.test.ts", kind: "cross-package", line: 3, specifier: "../../b/test/support/turns.js" },
      {
        file: "packages/a/test/A.test.ts",
        kind: "cross-package",
        line: 4,
        specifier: "../../b/test/fixtures/text.sse"
      },
      {
        file: "packages/a/test/A.test.ts",
        kind: "scripts-from-package",
        line: 5,
        specifier: "../../../scripts/testClockSleeps.js"
      },
      {
        file: "packages/a/vitest.config.ts",
        kind: "cross-package",
        line: 1,
        specifier: "../b/test/support/globalSetup.ts"
      },
      { file: "scripts/bench/b.ts", kind: "internal-from-scripts", line: 2, specifier: "@sluice/b/internal/resp" },
      { file: "scripts/bench/b.ts", kind: "internal-from-scripts", line: 3, specifier: "../../packages/a/src/index.js" }
    ])
  })

  it("finds nothing in a workspace whose parts import each other by name", { timeout: 30_000 }, () => {
    const root = workspace({
      "packages/a/src/index.ts": `export const a = 1\n`,
      "packages/a/test/A.test.ts":
        `import { a } from "../src/index.js"\nimport { withSleeps } from "@sluice/testing/clock"\n`,
      "scripts/bench/a.ts": `import { a } from "@sluice/a"\n`
    })
    expect(checkImports(root)).toEqual([])
  })

  it("finds in this repository only the crossings it knows, and each of those", { timeout: 60_000 }, () => {
    const { problems, stale } = unknown(checkImports(repository))
    expect(problems.map(({ file, line, message }) => `${file}:${line}: ${message}`)).toEqual([])
    expect(stale).toEqual([])
  })
})
