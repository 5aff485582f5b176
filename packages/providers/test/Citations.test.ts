import { describe, expect, it } from "@effect/vitest"
import type { OutputItem } from "@sluice/core"
import * as Effect from "effect/Effect"
import { Anthropic, Citations, Gemini, OpenAiResponses } from "../src/index.js"
import { finals, own, recorded, runText } from "./support/normalizerHarness.js"

const messagesOf = (items: ReadonlyArray<OutputItem.OutputItem>) =>
  items.flatMap((item) => (item.type === "message" ? [item] : []))

describe("Citations", () => {
  it("reads every Anthropic citation form: web search result, char / page / content block location, search result", () => {
    expect(
      [
        {
          type: "web_search_result_location",
          url: "https://a.example",
          title: "A",
          cited_text: "quoted",
          encrypted_index: "x"
        },
        {
          type: "char_location",
          cited_text: "c",
          document_index: 0,
          document_title: "Doc",
          start_char_index: 3,
          end_char_index: 9
        },
        {
          type: "page_location",
          cited_text: "p",
          document_index: 1,
          document_title: null,
          start_page_number: 2,
          end_page_number: 3
        },
        {
          type: "content_block_location",
          cited_text: "b",
          document_index: 2,
          document_title: "Blocks",
          start_block_index: 0,
          end_block_index: 1
        },
        {
          type: "search_result_location",
          source: "https://kb.example/1",
          title: "KB",
          cited_text: "s",
          search_result_index: 0,
          start_block_index: 0,
          end_block_index: 2
        },
        { type: "some_future_location" }
      ].map(Citations.fromAnthropic)
    ).toStrictEqual([
      { kind: "url", url: "https://a.example", title: "A", cited_text: "quoted" },
      {
        kind: "document",
        title: "Doc",
        cited_text: "c",
        document_index: 0,
        location: { unit: "char", start: 3, end: 9 }
      },
      { kind: "document", cited_text: "p", document_index: 1, location: { unit: "page", start: 2, end: 3 } },
      {
        kind: "document",
        title: "Blocks",
        cited_text: "b",
        document_index: 2,
        location: { unit: "block", start: 0, end: 1 }
      },
      {
        kind: "url",
        url: "https://kb.example/1",
        title: "KB",
        cited_text: "s",
        document_index: 0,
        location: { unit: "block", start: 0, end: 2 }
      },
      undefined
    ])
  })

  it("reads every OpenAI Responses annotation form: url, file, file path, container file", () => {
    expect(
      [
        { type: "url_citation", url: "https://b.example", title: "B", start_index: 4, end_index: 20 },
        { type: "file_citation", file_id: "file-1", filename: "ai.pdf", index: 154 },
        { type: "file_path", file_id: "file-2", index: 7 },
        {
          type: "container_file_citation",
          container_id: "cntr",
          file_id: "cfile",
          filename: "sums.csv",
          start_index: 423,
          end_index: 465
        },
        { type: "unknown_annotation" }
      ].map(Citations.fromOpenAi)
    ).toStrictEqual([
      { kind: "url", url: "https://b.example", title: "B", text_start: 4, text_end: 20 },
      { kind: "document", file_id: "file-1", filename: "ai.pdf", text_start: 154, text_end: 154 },
      { kind: "document", file_id: "file-2", text_start: 7, text_end: 7 },
      { kind: "document", file_id: "cfile", filename: "sums.csv", text_start: 423, text_end: 465 },
      undefined
    ])
  })

  it.effect("Anthropic web search (recorded): the cited text blocks carry their sources, uncited ones none", () =>
    Effect.gen(function*() {
      const messages = messagesOf(finals(yield* runText(Anthropic.normalize, recorded("anthropic", "web-search.sse"))))
      const cited = messages.filter((message) => message.sources !== undefined)
      expect(cited.length).toBeGreaterThan(0)
      expect(cited.length).toBeLessThan(messages.length)
      for (const message of cited) {
        expect(message.sources!.length).toBe((message.provider_metadata?.citations as ReadonlyArray<unknown>).length)
        for (const source of message.sources!) {
          expect(source.kind).toBe("url")
          expect(source.url?.startsWith("https://")).toBe(true)
          expect(source.cited_text?.length).toBeGreaterThan(0)
        }
      }
      expect(cited[0]!.sources![0]).toStrictEqual({
        kind: "url",
        url: "https://www.apple.com/newsroom/2025/09/the-all-new-apple-ginza-opens-this-friday-september-26-in-tokyo/",
        title: "The all-new Apple Ginza opens this Friday, September 26, in Tokyo - Apple",
        cited_text:
          "Apple today announced the grand reopening of Apple Ginza on Friday, September 26, located in the vibrant Ginza district."
      })
    }))

  it.effect("OpenAI Responses (recorded): url citations of web search and file citations of file search span the message text", () =>
    Effect.gen(function*() {
      for (
        const [name, kind] of [["web-search", "url"], ["file-search", "document"], [
          "code-interpreter",
          "document"
        ]] as const
      ) {
        const [message] = messagesOf(
          finals(yield* runText(OpenAiResponses.normalize, recorded("openai-responses", `${name}.sse`)))
        ).filter(
          (m) => m.sources !== undefined
        )
        expect([name, message?.sources?.every((source) => source.kind === kind)]).toStrictEqual([name, true])
        for (const source of message!.sources!) expect(source.text_end! <= message!.content.length).toBe(true)
      }
    }))

  it.effect("Gemini grounding: one source per chunk a support cites, with its span; uncited chunks last; the metadata kept", () =>
    Effect.gen(function*() {
      const [message] = messagesOf(finals(yield* runText(Gemini.normalize, own("gemini", "grounding.sse"))))
      expect(message?.content).toBe("Spain won Euro 2024, beating England 2-1 in the final.")
      expect(message?.sources?.map((source) => [source.title, source.text_start ?? null, source.text_end ?? null]))
        .toStrictEqual([
          ["uefa.com", 0, 34],
          ["wikipedia.org", 0, 34],
          ["wikipedia.org", 35, 55],
          ["bbc.co.uk", null, null]
        ])
      expect(message?.sources?.[0]).toMatchObject({ kind: "url", cited_text: "Spain won Euro 2024, beating England" })
      expect(message?.provider_metadata?.grounding).toMatchObject({ webSearchQueries: ["who won euro 2024"] })
      expect(
        Citations.fromGeminiGrounding({
          groundingChunks: [{ retrievedContext: { uri: "gs://b/doc.pdf", title: "doc" } }]
        })
      ).toStrictEqual([
        { kind: "document", url: "gs://b/doc.pdf", title: "doc" }
      ])
      expect(Citations.fromGeminiGrounding("not grounding")).toStrictEqual([])
    }))

  it.effect("the hand-written streams give the same sources streamed and whole", () =>
    Effect.gen(function*() {
      const streamed = messagesOf(finals(yield* runText(Anthropic.normalize, own("anthropic", "server-tool.sse"))))
      const whole = messagesOf(
        finals(yield* Anthropic.normalizeResponse(JSON.parse(own("anthropic", "server-tool.json"))))
      )
      expect(streamed.map((m) => m.sources)).toStrictEqual(whole.map((m) => m.sources))
      expect(streamed.some((m) => m.sources !== undefined)).toBe(true)
    }))
})
