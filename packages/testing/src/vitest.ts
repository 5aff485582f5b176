/**
 * The one test configuration every package's `vitest.config.ts` builds on.
 *
 * The suite must pass on a busy 2-core machine, so no test runs under Vitest's 5 s
 * default: a plain test gets 30 s and a hook 60 s, and a test that does more (a
 * property test, a Chromium page, a spawned process) states its own timeout beside it.
 */
import { defineProject, type UserWorkspaceConfig } from "vitest/config"

/**
 * The timeout of a test that states none, in milliseconds.
 *
 * @since 0.3.0
 */
export const testTimeout = 30_000

/**
 * The timeout of a `beforeAll`/`afterAll` hook or a shared layer's setup, in milliseconds.
 *
 * @since 0.3.0
 */
export const hookTimeout = 60_000

/**
 * The export condition under which every workspace package resolves to its TypeScript
 * sources (`src/index.ts`) instead of its build (`dist/`): tests, like `pnpm typecheck`
 * (`customConditions` in `tsconfig.base.json`), run on the sources without a build.
 * Published packages do not carry it (their `publishConfig.exports`).
 *
 * @since 0.3.0
 */
export const sourceCondition = "@sluice/source"

// Vite's own defaults, which `resolve.conditions` replaces rather than extends; on the
// server side without `module`: Vitest 5 resolves externalized dependencies with these
// conditions too, and a CommonJS package that requires one with an ESM build under
// `module` (OpenTelemetry's OTLP exporter) then loads a build Node cannot run
const clientConditions = ["module", "browser", "development|production"]
const serverConditions = ["node", "development|production"]

/**
 * `NODE_OPTIONS` for the processes tests spawn (the `sluice` command through tsx, the
 * server's producer scripts): Node resolves the workspace packages under the source
 * condition too, so they run the sources, not a build that may be missing or stale.
 */
const nodeOptions = [process.env["NODE_OPTIONS"], `--conditions=${sourceCondition}`].filter(Boolean).join(" ")

/**
 * The test project of one package: its tests under `test/`, the workspace's timeouts,
 * and whatever else the package adds (a global setup, for one).
 *
 * @since 0.3.0
 */
export const sluiceProject = (name: string, test: NonNullable<UserWorkspaceConfig["test"]> = {}) =>
  defineProject({
    resolve: { conditions: [sourceCondition, ...clientConditions] },
    ssr: { resolve: { conditions: [sourceCondition, ...serverConditions] } },
    test: {
      name,
      include: ["test/**/*.test.ts"],
      testTimeout,
      hookTimeout,
      ...test,
      env: { NODE_OPTIONS: nodeOptions, ...test.env }
    }
  })
