/**
 * The one classification of the failures a turn can end with: by `_tag`, the same for
 * the pipeline (the turn's error code) and the applications on it (the CLI's exit
 * code).
 */
import { describe, expect, it } from "@effect/vitest"
import { Sse } from "@sluice/core"
import { WireDecodeError } from "@sluice/providers"
import { RedisError } from "@sluice/redis"
import { PipelineError } from "../src/index.js"

describe("PipelineError.classify", () => {
  it("classifies each failure by its _tag, a plain tagged object as its class", () => {
    expect(PipelineError.classify(new Sse.SseError({ reason: "InvalidUtf8", message: "x" }))).toBe("InvalidInput")
    const wire = new WireDecodeError.WireDecodeError({ provider: "p", line: 1, reason: "InvalidJson", message: "x" })
    expect(PipelineError.classify(wire)).toBe("InvalidInput")
    expect(PipelineError.classify({ _tag: "WireDecodeError", message: "bad" })).toBe("InvalidInput")
    expect(PipelineError.classify({ _tag: "AccumulatorError" })).toBe("InvalidEventOrder")
    expect(PipelineError.classify({ _tag: "UnexpectedEvent" })).toBe("InvalidEventOrder")
    expect(PipelineError.classify({ _tag: "PublishError", message: "XADD failed" })).toBe("InfrastructureLost")
    expect(PipelineError.classify({ _tag: "RedisError" })).toBe("InfrastructureLost")
    const redis = new RedisError.RedisError({ reason: "Rejected", command: "XADD", detail: "x" })
    expect(PipelineError.classify(redis)).toBe("InfrastructureLost")
    expect(PipelineError.classify({ _tag: "InvalidPublisherOptions" })).toBe("Internal")
    expect(PipelineError.classify({ _tag: "SomethingElse" })).toBe("Internal")
    expect(PipelineError.classify(new Error("boom"))).toBe("Internal")
    expect(PipelineError.classify("boom")).toBe("Internal")
    expect(PipelineError.classify(undefined)).toBe("Internal")
  })

  it("gives the error code a turn ends with", () => {
    expect(PipelineError.errorCode("InvalidInput")).toBe("invalid_input")
    expect(PipelineError.errorCode("InvalidEventOrder")).toBe("invalid_event_order")
    expect(PipelineError.errorCode("InfrastructureLost")).toBe("pipeline_error")
    expect(PipelineError.errorCode("Internal")).toBe("pipeline_error")
  })
})
