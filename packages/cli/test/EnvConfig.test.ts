/**
 * Options from the environment: the flag when given, else the variable, else the
 * default.
 */
import { describe, expect, it } from "@effect/vitest"
import { transcriptPath } from "@sluice/testing/fixtures"
import * as Effect from "effect/Effect"
import { sluice as sluiceIn } from "./support/sluice.js"

const transcript = transcriptPath("recorded", "openai-chat", "text-simple.sse")

const streamB = (stdout: string) => /Stream B: (\S+)/.exec(stdout)?.[1]

const sluice = (env: Record<string, string>, ...args: ReadonlyArray<string>) => sluiceIn(env, args)

describe("options from the environment", () => {
  it.effect("flag > environment > default", () =>
    Effect.gen(function*() {
      const byDefault = yield* sluice({}, "replay", "--provider", "openai-chat", transcript)
      expect(byDefault.code).toBe(0)
      expect(streamB(byDefault.stdout)).toMatch(/^codex:turn:/)
      const fromEnv = yield* sluice({ SLUICE_PREFIX: "from-env" }, "replay", "--provider", "openai-chat", transcript)
      expect(streamB(fromEnv.stdout)).toMatch(/^from-env:turn:/)
      const fromFlag = yield* sluice(
        { SLUICE_PREFIX: "from-env" },
        "replay",
        "--provider",
        "openai-chat",
        "--prefix",
        "from-flag",
        transcript
      )
      expect(streamB(fromFlag.stdout)).toMatch(/^from-flag:turn:/)
    }))

  it.effect("a required option (--provider) and the ids can come from the environment", () =>
    Effect.gen(function*() {
      const turn = "0b4c7a52-9a55-4f1e-8f0a-3a1b2c3d4e5f"
      const result = yield* sluice({ SLUICE_PROVIDER: "openai-chat", SLUICE_TURN: turn }, "replay", transcript)
      expect([result.code, result.stderr]).toStrictEqual([0, ""])
      expect(streamB(result.stdout)).toBe(`codex:turn:{${turn}}:upserts`)
    }))

  it.effect("a variable that is not of the option's type is bad configuration, named", () =>
    Effect.gen(function*() {
      const pace = yield* sluice({ SLUICE_PACE: "slow" }, "replay", "--provider", "openai-chat", transcript)
      expect(pace.code).toBe(2)
      expect(pace.stderr).toMatch(/^sluice: .*SLUICE_PACE.*\n$/)
      const ttl = yield* sluice({ SLUICE_LINK_TTL_MINUTES: "0" }, "serve", "--insecure-local", "--port", "0")
      expect([ttl.code, ttl.stderr]).toStrictEqual([2, "sluice: --link-ttl-minutes must be from 1 to 10080, got 0\n"])
    }))
})
