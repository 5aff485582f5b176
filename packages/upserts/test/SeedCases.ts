/**
 * The behaviour cases TC-01 to TC-11 of docs/upserts.md as data: the input events and the payloads each
 * case expects. The stage tests and the facade tests both run them.
 */
import type { StreamBMessage, StreamEvent } from "@sluice/core"
import * as F from "@sluice/testing/fixtures"

export interface SeedCase {
  readonly name: string
  readonly events: ReadonlyArray<StreamEvent.StreamEvent>
  readonly expected: ReadonlyArray<StreamBMessage.UIPayload>
}

const agent = { origin: "agent" } as const

const tc10Deltas = Array.from({ length: 500 }, () => F.delta("msg-1", "abcd"))
const tc10Content = (tokens: number) => "abcd".repeat(tokens)

export const seedCases: ReadonlyArray<SeedCase> = [
  {
    name: "TC-01: Simple Agent Message",
    events: [
      F.responseStart("anthropic"),
      F.itemStart("msg-1", "message"),
      F.delta("msg-1", "Hello there!"),
      F.messageDone("msg-1", "Hello there!", "agent"),
      F.responseDone("complete")
    ],
    expected: [
      F.turnStarted("anthropic"),
      F.upsert("msg-1", "message", "created", "Hello there!", agent),
      F.upsert("msg-1", "message", "completed", "Hello there!", agent),
      F.turnCompleted("complete")
    ]
  },
  {
    name: "TC-02: Agent Message With Batching",
    events: [
      F.responseStart(),
      F.itemStart("msg-1", "message"),
      F.delta("msg-1", "Hello, how are you?"),
      F.delta("msg-1", " I hope you're having a great"),
      F.delta("msg-1", " day today!"),
      F.messageDone("msg-1", "Hello, how are you? I hope you're having a great day today!"),
      F.responseDone()
    ],
    expected: [
      F.turnStarted(),
      F.upsert("msg-1", "message", "created", "Hello, how are you?", agent),
      F.upsert("msg-1", "message", "updated", "Hello, how are you? I hope you're having a great", agent),
      F.upsert("msg-1", "message", "completed", "Hello, how are you? I hope you're having a great day today!", agent),
      F.turnCompleted()
    ]
  },
  {
    name: "TC-03: User Message (Held Until Complete)",
    events: [
      F.responseStart(),
      F.itemStart("run-123-user-prompt", "message"),
      F.messageDone("run-123-user-prompt", "What is the weather?", "user"),
      F.itemStart("msg-1", "message"),
      F.delta("msg-1", "Sunny."),
      F.messageDone("msg-1", "Sunny."),
      F.responseDone()
    ],
    expected: [
      F.turnStarted(),
      F.upsert("run-123-user-prompt", "message", "completed", "What is the weather?", { origin: "user" }),
      F.upsert("msg-1", "message", "created", "Sunny.", agent),
      F.upsert("msg-1", "message", "completed", "Sunny.", agent),
      F.turnCompleted()
    ]
  },
  {
    name: "TC-04: Anthropic Reasoning Block",
    events: [
      F.responseStart("anthropic"),
      F.itemStart("think-1", "reasoning"),
      F.delta("think-1", "Let me think"),
      F.delta("think-1", " about the question carefully."),
      F.delta("think-1", " Done."),
      F.reasoningDone("think-1", "Let me think about the question carefully. Done."),
      F.itemStart("msg-1", "message"),
      F.delta("msg-1", "Here it is."),
      F.messageDone("msg-1", "Here it is."),
      F.responseDone()
    ],
    expected: [
      F.turnStarted("anthropic"),
      F.upsert("think-1", "reasoning", "created", "Let me think", { providerId: "anthropic" }),
      F.upsert("think-1", "reasoning", "updated", "Let me think about the question carefully.", {
        providerId: "anthropic"
      }),
      F.upsert("think-1", "reasoning", "completed", "Let me think about the question carefully. Done.", {
        providerId: "anthropic"
      }),
      F.upsert("msg-1", "message", "created", "Here it is.", agent),
      F.upsert("msg-1", "message", "completed", "Here it is.", agent),
      F.turnCompleted()
    ]
  },
  {
    name: "TC-05: Tool Call and Output",
    events: [
      F.responseStart(),
      F.itemStart("fc-1", "function_call", { name: "read_file" }),
      F.callDone("fc-1", "read_file", "{\"path\": \"/tmp/test.txt\"}", "call-1"),
      F.itemStart("out-1", "function_call_output"),
      F.outputDone("out-1", "call-1", "{\"content\": \"file contents\"}", true),
      F.itemStart("msg-1", "message"),
      F.delta("msg-1", "Read it."),
      F.messageDone("msg-1", "Read it."),
      F.responseDone()
    ],
    expected: [
      F.turnStarted(),
      F.upsert("fc-1", "tool_call", "completed", "{\"path\": \"/tmp/test.txt\"}", {
        toolName: "read_file",
        toolArguments: { path: "/tmp/test.txt" },
        callId: "call-1"
      }),
      F.upsert("out-1", "tool_output", "completed", "{\"content\": \"file contents\"}", {
        callId: "call-1",
        toolOutput: { content: "file contents" },
        success: true
      }),
      F.upsert("msg-1", "message", "created", "Read it.", agent),
      F.upsert("msg-1", "message", "completed", "Read it.", agent),
      F.turnCompleted()
    ]
  },
  {
    name: "TC-06: Multiple Tool Calls in Sequence",
    events: [
      F.responseStart(),
      F.itemStart("fc-1", "function_call", { name: "read_file" }),
      F.callDone("fc-1", "read_file", "{\"path\":\"a.txt\"}", "call-1"),
      F.itemStart("out-1", "function_call_output"),
      F.outputDone("out-1", "call-1", "plain text output", true),
      F.itemStart("fc-2", "function_call", { name: "write_file" }),
      F.callDone("fc-2", "write_file", "{\"path\":\"b.txt\",\"text\":\"x\"}", "call-2"),
      F.itemStart("out-2", "function_call_output"),
      F.outputDone("out-2", "call-2", "{\"written\":1}", false),
      F.itemStart("msg-1", "message"),
      F.delta("msg-1", "Both done."),
      F.messageDone("msg-1", "Both done."),
      F.responseDone()
    ],
    expected: [
      F.turnStarted(),
      F.upsert("fc-1", "tool_call", "completed", "{\"path\":\"a.txt\"}", {
        toolName: "read_file",
        toolArguments: { path: "a.txt" },
        callId: "call-1"
      }),
      F.upsert("out-1", "tool_output", "completed", "plain text output", {
        callId: "call-1",
        toolOutput: "plain text output",
        success: true
      }),
      F.upsert("fc-2", "tool_call", "completed", "{\"path\":\"b.txt\",\"text\":\"x\"}", {
        toolName: "write_file",
        toolArguments: { path: "b.txt", text: "x" },
        callId: "call-2"
      }),
      F.upsert("out-2", "tool_output", "completed", "{\"written\":1}", {
        callId: "call-2",
        toolOutput: { written: 1 },
        success: false
      }),
      F.upsert("msg-1", "message", "created", "Both done.", agent),
      F.upsert("msg-1", "message", "completed", "Both done.", agent),
      F.turnCompleted()
    ]
  },
  {
    name: "TC-07: Item Error Mid-Stream",
    events: [
      F.responseStart(),
      F.itemStart("msg-1", "message"),
      F.delta("msg-1", "The answer is"),
      F.itemError("msg-1", "CONTENT_FILTER", "Content blocked"),
      F.responseDone("error")
    ],
    expected: [
      F.turnStarted(),
      F.upsert("msg-1", "message", "created", "The answer is", agent),
      F.upsert("msg-1", "error", "completed", "The answer is", {
        errorCode: "CONTENT_FILTER",
        errorMessage: "Content blocked"
      }),
      F.turnCompleted("error")
    ]
  },
  {
    name: "TC-08: Response Error",
    events: [F.responseStart(), F.responseError("RATE_LIMIT", "Too many requests")],
    expected: [F.turnStarted(), F.turnError("RATE_LIMIT", "Too many requests")]
  },
  {
    name: "TC-10: Batch Gradient Progression",
    events: [
      F.responseStart(),
      F.itemStart("msg-1", "message"),
      ...tc10Deltas,
      F.messageDone("msg-1", tc10Content(500)),
      F.responseDone()
    ],
    expected: [
      F.turnStarted(),
      F.upsert("msg-1", "message", "created", tc10Content(1), agent),
      ...[10, 20, 40, 60, 110, 160, 210, 260, 360, 460].map((tokens) =>
        F.upsert("msg-1", "message", "updated", tc10Content(tokens), agent)
      ),
      F.upsert("msg-1", "message", "completed", tc10Content(500), agent),
      F.turnCompleted()
    ]
  },
  {
    name: "TC-11: Empty Content Item",
    events: [F.responseStart(), F.itemStart("msg-1", "message"), F.messageDone("msg-1", ""), F.responseDone()],
    expected: [F.turnStarted(), F.upsert("msg-1", "message", "completed", "", agent), F.turnCompleted()]
  }
]
