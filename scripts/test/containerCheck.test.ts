/**
 * `scripts/containerCheck.sh` against stand-in engines on `PATH`: it skips (exit 0, the
 * reason printed) when it cannot try, and fails (exit 1) once the base images are at
 * hand and the build is broken or the image lost its HEALTHCHECK
 * (docs/container.md#podman-and-buildah). No real engine, registry or network is used.
 */
import { spawnSync } from "node:child_process"
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"

const script = fileURLToPath(new URL("../containerCheck.sh", import.meta.url))

const made: Array<string> = []
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A `podman` that answers each subcommand as `answers` says (a shell case body), and a PATH holding it and the basics. */
const fakePodman = (answers: string): string => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-container-check-"))
  made.push(dir)
  const podman = join(dir, "podman")
  writeFileSync(podman, `#!/usr/bin/env bash\ncase "$1 $2" in\n${answers}\nesac\n`)
  chmodSync(podman, 0o755)
  return dir
}

const check = (path: string, engine = "podman") => {
  const result = spawnSync("bash", [script], {
    env: { PATH: `${path}:/usr/bin:/bin`, SLUICE_CONTAINER_ENGINE: engine, HOME: tmpdir() },
    encoding: "utf8",
    timeout: 60_000
  })
  return { code: result.status, stderr: result.stderr }
}

describe("scripts/containerCheck.sh", () => {
  it("no engine: skipped, exit 0, saying so", () => {
    const empty = mkdtempSync(join(tmpdir(), "sluice-container-check-"))
    made.push(empty)
    const result = check(empty, "sluice-no-such-engine")
    expect(result.code).toBe(0)
    expect(result.stderr).toMatch(/^containerCheck: skipped: sluice-no-such-engine is not installed/m)
  }, 60_000)

  it("base images that cannot be pulled: skipped, exit 0, with the engine's reason", () => {
    const result = check(
      fakePodman(`"image exists") exit 1 ;;\n"pull -q") echo "dial tcp: no such host" >&2; exit 125 ;;`)
    )
    expect(result.code).toBe(0)
    expect(result.stderr).toContain("skipped: the base image docker.io/library/node:")
    expect(result.stderr).toContain("no such host")
  }, 60_000)

  it("base images at hand and a build that fails: exit 1", () => {
    const result = check(fakePodman(`"image exists") exit 0 ;;\n"build --format") exit 1 ;;`))
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("FAILED: podman build failed")
  }, 60_000)

  it("an image built without its HEALTHCHECK (the OCI format): exit 1", () => {
    const result = check(
      fakePodman(
        `"image exists") exit 0 ;;\n"build --format") exit 0 ;;\n"image inspect") echo null ;;\n"run --rm") echo 0.3.0 ;;\n*) exit 0 ;;`
      )
    )
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("lost its HEALTHCHECK")
  }, 60_000)

  it("an image with its HEALTHCHECK whose bundle runs: ok", () => {
    const result = check(
      fakePodman(
        `"image exists") exit 0 ;;\n"build --format") exit 0 ;;\n"image inspect") echo '{"Test":["CMD","/nodejs/bin/node","-e","fetch(/healthz)"]}' ;;\n"run --rm") echo 0.3.0 ;;\n*) exit 0 ;;`
      )
    )
    expect(result.stderr).toContain("containerCheck: ok (podman; HEALTHCHECK kept; sluice --version: 0.3.0)")
    expect(result.code).toBe(0)
  }, 60_000)
})
