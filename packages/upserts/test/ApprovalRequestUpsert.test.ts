/**
 * An approval request (docs/events.md#output-items) becomes one `completed` upsert of
 * itemType `approval_request`: the tool and its arguments, the server and the request id
 * the answer names. It is held until its item_done, like a tool call.
 */
import { describe, expect, it } from "@effect/vitest"
import * as F from "@sluice/testing/fixtures"
import * as Effect from "effect/Effect"

describe("approval request upserts", () => {
  it.effect(
    "an approval request completes as itemType approval_request with tool, server and request id",
    () =>
      Effect.gen(function*() {
        const out = yield* F.runStage([
          F.responseStart("openai-responses", "gpt-test"),
          F.itemStart("mcpr_1", "approval_request", { name: "ask_question" }),
          F.done("mcpr_1", {
            type: "approval_request",
            id: "mcpr_1",
            provider_id: "mcpr_abc",
            server_label: "deepwiki",
            name: "ask_question",
            arguments: "{\"question\":\"Which transports?\"}"
          }),
          F.responseDone()
        ])
        expect(out.filter((payload) => payload.type === "item_upsert")).toStrictEqual([
          F.upsert("mcpr_1", "approval_request", "completed", "{\"question\":\"Which transports?\"}", {
            toolName: "ask_question",
            toolArguments: { question: "Which transports?" },
            approvalRequestId: "mcpr_abc",
            serverLabel: "deepwiki"
          })
        ])
      }),
    10_000
  )
})
