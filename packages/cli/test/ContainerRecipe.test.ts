/**
 * What the container files promise beside what `Container.test.ts` runs
 * (docs/container.md): compose passes the providers' base URLs and `SLUICE_MAX_TURNS`
 * on, the base images take a digest pin as build arguments (tags alone by default),
 * and `.ci/run` calls the image check after the tests.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { parse, stage } from "./support/dockerfile.js"
import * as Yaml from "./support/yaml.js"

const root = join(import.meta.dirname, "..", "..", "..")
const read = (path: string) => readFileSync(join(root, path), "utf8")

describe("the container recipe", () => {
  it("compose passes the providers' base URLs and SLUICE_MAX_TURNS on from its environment", () => {
    const Compose = Schema.Struct({
      services: Schema.Struct({
        sluice: Schema.Struct({ environment: Schema.Record(Schema.String, Schema.NullOr(Schema.String)) })
      })
    })
    const environment = Schema.decodeUnknownSync(Compose)(Yaml.parse(read("compose.yaml"))).services.sluice.environment
    for (const variable of ["OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "GEMINI_BASE_URL", "SLUICE_MAX_TURNS"]) {
      // passed on by name: set in compose's environment or .env, left out otherwise
      expect({ variable, value: environment[variable] }).toStrictEqual({ variable, value: null })
    }
  }, 30_000)

  it("the base images are tags by default and take a digest from BUILD_DIGEST and RUNTIME_DIGEST", () => {
    const dockerfile = read("Dockerfile")
    const stages = parse(dockerfile)
    expect(stage(stages, "build").image).toBe("node:24-bookworm-slim")
    expect(stage(stages, "runtime").image).toBe("gcr.io/distroless/nodejs24-debian12:nonroot")
    const digest = `@sha256:${"a".repeat(64)}`
    const pinned = parse(
      dockerfile.replace(/^ARG BUILD_DIGEST=$/m, `ARG BUILD_DIGEST=${digest}`).replace(
        /^ARG RUNTIME_DIGEST=$/m,
        `ARG RUNTIME_DIGEST=${digest}`
      )
    )
    expect(stage(pinned, "build").image).toBe(`node:24-bookworm-slim${digest}`)
    expect(stage(pinned, "runtime").image).toBe(`gcr.io/distroless/nodejs24-debian12:nonroot${digest}`)
  }, 30_000)

  it(".ci/run checks the image after the tests; the docs say a Redis down at start exits 2", () => {
    const ci = read(".ci/run").trimEnd().split("\n")
    expect(ci.at(-1)).toBe("scripts/containerCheck.sh")
    expect(ci.indexOf("pnpm test")).toBeLessThan(ci.length - 1)
    const doc = read("docs/container.md").replace(/\s+/g, " ")
    expect(doc).toContain("does not answer when the server starts is a start-up failure, exit 2")
    expect(doc).toContain("--format docker")
  }, 30_000)
})
