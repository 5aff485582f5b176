/**
 * Options left unset are left out of the provider request: no wire API's encoder emits a
 * key whose value is `undefined` or `null` for an option the request did not set.
 */
import { describe, expect, it } from "@effect/vitest"
import { type LlmRequest, Providers } from "../src/index.js"
import { ProviderName } from "../src/ProviderName.js"

/** The paths of every `undefined` or `null` value in a body. */
const emptyKeys = (value: unknown, path = "body"): Array<string> => {
  if (value === undefined || value === null) return [path]
  if (Array.isArray(value)) return value.flatMap((entry, index) => emptyKeys(entry, `${path}[${index}]`))
  if (typeof value === "object") {
    return Object.entries(value).flatMap(([key, entry]) => emptyKeys(entry, `${path}.${key}`))
  }
  return []
}

const requests: ReadonlyArray<readonly [string, LlmRequest.LlmRequest]> = [
  ["a prompt alone", { model: "m", messages: [{ _tag: "user", text: "hi" }] }],
  ["a tool without description", {
    model: "m",
    messages: [{ _tag: "user", text: "hi" }],
    tools: [{ name: "lookup", parameters: {} }]
  }],
  ["a non-streaming request", { model: "m", messages: [{ _tag: "user", text: "hi" }], streaming: false }]
]

describe("unset options stay out of every provider's request", () => {
  for (const provider of ProviderName.literals) {
    for (const [name, request] of requests) {
      it(`${provider}: ${name}`, () => {
        const body = Providers.encode(provider, request, { apiKey: "k", baseUrl: "http://x" }).body
        expect(emptyKeys(body)).toStrictEqual([])
        for (const key of ["temperature", "max_output_tokens", "reasoning", "container", "system", "tools"]) {
          if (name === "a prompt alone") expect(body).not.toHaveProperty(key)
        }
      }, 30_000)
    }
  }
})
