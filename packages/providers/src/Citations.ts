/**
 * Provider citations as `OutputItem.Source`s, the sources a message cites: Anthropic
 * text-block `citations` (and `citations_delta`), OpenAI Responses `output_text`
 * `annotations` and Gemini `groundingMetadata`. A citation of a shape Sluice does not know gives no source; the
 * provider's own objects stay in the item's `provider_metadata` either way.
 *
 * @since 0.1.0
 */
import type { Json, OutputItem } from "@sluice/core"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

const optional = <S extends Schema.Constraint>(schema: S) => Schema.optionalKey(schema)
const Index = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
const Text = optional(Schema.NullOr(Schema.String))

/**
 * An Anthropic citation: `web_search_result_location` (url, title, cited text),
 * `char_location`, `page_location`, `content_block_location` (a request document by
 * index, with its title and the span cited) and `search_result_location` (a search
 * result by its `source`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const AnthropicCitation = Schema.Union([
  Schema.Struct({
    type: Schema.Literal("web_search_result_location"),
    url: Schema.String,
    title: Text,
    cited_text: Text
  }),
  Schema.Struct({
    type: Schema.Literal("char_location"),
    cited_text: Text,
    document_index: optional(Index),
    document_title: Text,
    file_id: Text,
    start_char_index: Index,
    end_char_index: Index
  }),
  Schema.Struct({
    type: Schema.Literal("page_location"),
    cited_text: Text,
    document_index: optional(Index),
    document_title: Text,
    file_id: Text,
    start_page_number: Index,
    end_page_number: Index
  }),
  Schema.Struct({
    type: Schema.Literal("content_block_location"),
    cited_text: Text,
    document_index: optional(Index),
    document_title: Text,
    file_id: Text,
    start_block_index: Index,
    end_block_index: Index
  }),
  Schema.Struct({
    type: Schema.Literal("search_result_location"),
    source: Schema.String,
    title: Text,
    cited_text: Text,
    search_result_index: optional(Index),
    start_block_index: Index,
    end_block_index: Index
  })
]).annotate({ identifier: "AnthropicCitation" })

/**
 * An OpenAI Responses `output_text` annotation: `url_citation` (a web page and the span
 * of the text it supports), `file_citation` and `file_path` (a file, at an index of the
 * text), `container_file_citation` (a code-interpreter file and its span).
 *
 * @since 0.1.0
 * @category schemas
 */
export const OpenAiAnnotation = Schema.Union([
  Schema.Struct({
    type: Schema.Literal("url_citation"),
    url: Schema.String,
    title: Text,
    start_index: optional(Index),
    end_index: optional(Index)
  }),
  Schema.Struct({
    type: Schema.Literals(["file_citation", "file_path"]),
    file_id: Schema.String,
    filename: Text,
    index: optional(Index)
  }),
  Schema.Struct({
    type: Schema.Literal("container_file_citation"),
    file_id: Schema.String,
    filename: Text,
    start_index: optional(Index),
    end_index: optional(Index)
  })
]).annotate({ identifier: "OpenAiAnnotation" })

/**
 * Gemini's `groundingMetadata` (Google Search grounding, and retrieval): the grounding
 * chunks (`web` pages, `retrievedContext` documents) and the supports that tie spans
 * of the answer (`segment`) to chunks by index.
 *
 * @since 0.1.0
 * @category schemas
 */
export const GeminiGrounding = Schema.Struct({
  groundingChunks: optional(
    Schema.Array(
      Schema.Struct({
        web: optional(Schema.Struct({ uri: Text, title: Text })),
        retrievedContext: optional(Schema.Struct({ uri: Text, title: Text, text: Text })),
        // grounding with Google Maps: a place
        maps: optional(Schema.Struct({ uri: Text, title: Text }))
      })
    )
  ),
  groundingSupports: optional(
    Schema.Array(
      Schema.Struct({
        segment: optional(Schema.Struct({ startIndex: optional(Index), endIndex: optional(Index), text: Text })),
        groundingChunkIndices: optional(Schema.Array(Index))
      })
    )
  )
}).annotate({ identifier: "GeminiGrounding" })

/**
 * Gemini's `citationMetadata`: the sources a candidate's text recites
 * (`citationSources`, each with its span of the text and, mostly, a `uri`).
 *
 * @since 0.3.0
 * @category schemas
 */
export const GeminiCitationMetadata = Schema.Struct({
  citationSources: optional(
    Schema.Array(
      Schema.Struct({ startIndex: optional(Index), endIndex: optional(Index), uri: Text, title: Text })
    )
  )
}).annotate({ identifier: "GeminiCitationMetadata" })

const decodeAnthropic = Schema.decodeUnknownOption(AnthropicCitation)
const decodeOpenAi = Schema.decodeUnknownOption(OpenAiAnnotation)
const decodeGemini = Schema.decodeUnknownOption(GeminiGrounding)
const decodeGeminiCitations = Schema.decodeUnknownOption(GeminiCitationMetadata)

type Fields = { readonly [K in Exclude<keyof OutputItem.Source, "kind">]?: OutputItem.Source[K] | null | undefined }

const has = <A>(value: A | null | undefined): value is A => value !== null && value !== undefined

/** A source of the given kind with the fields that have values (the provider's `null`s dropped). */
const source = (kind: OutputItem.Source["kind"], fields: Fields): OutputItem.Source => ({
  kind,
  ...(has(fields.url) ? { url: fields.url } : {}),
  ...(has(fields.title) ? { title: fields.title } : {}),
  ...(has(fields.cited_text) ? { cited_text: fields.cited_text } : {}),
  ...(has(fields.document_index) ? { document_index: fields.document_index } : {}),
  ...(has(fields.file_id) ? { file_id: fields.file_id } : {}),
  ...(has(fields.filename) ? { filename: fields.filename } : {}),
  ...(has(fields.location) ? { location: fields.location } : {}),
  ...(has(fields.text_start) ? { text_start: fields.text_start } : {}),
  ...(has(fields.text_end) ? { text_end: fields.text_end } : {})
})

/**
 * The source of one Anthropic citation, or `undefined` for a shape Sluice does not know.
 *
 * @since 0.1.0
 * @category conversions
 */
export const fromAnthropic = (citation: Json.JsonValue): OutputItem.Source | undefined =>
  Option.getOrUndefined(
    Option.map(decodeAnthropic(citation), (c): OutputItem.Source => {
      switch (c.type) {
        case "web_search_result_location":
          return source("url", { url: c.url, title: c.title, cited_text: c.cited_text })
        case "search_result_location":
          return source("url", {
            url: c.source,
            title: c.title,
            cited_text: c.cited_text,
            document_index: c.search_result_index,
            location: { unit: "block", start: c.start_block_index, end: c.end_block_index }
          })
        case "char_location":
        case "page_location":
        case "content_block_location": {
          const location: OutputItem.SourceLocation = c.type === "char_location"
            ? { unit: "char", start: c.start_char_index, end: c.end_char_index }
            : c.type === "page_location"
            ? { unit: "page", start: c.start_page_number, end: c.end_page_number }
            : { unit: "block", start: c.start_block_index, end: c.end_block_index }
          return source("document", {
            title: c.document_title,
            cited_text: c.cited_text,
            document_index: c.document_index,
            file_id: c.file_id,
            location
          })
        }
      }
    })
  )

/**
 * The source of one OpenAI Responses annotation, or `undefined` for a shape Sluice does
 * not know.
 *
 * @since 0.1.0
 * @category conversions
 */
export const fromOpenAi = (annotation: Json.JsonValue): OutputItem.Source | undefined =>
  Option.getOrUndefined(
    Option.map(decodeOpenAi(annotation), (a): OutputItem.Source => {
      switch (a.type) {
        case "url_citation":
          return source("url", { url: a.url, title: a.title, text_start: a.start_index, text_end: a.end_index })
        case "file_citation":
        case "file_path":
          return source("document", {
            file_id: a.file_id,
            filename: a.filename,
            text_start: a.index,
            text_end: a.index
          })
        case "container_file_citation":
          return source("document", {
            file_id: a.file_id,
            filename: a.filename,
            text_start: a.start_index,
            text_end: a.end_index
          })
      }
    })
  )

/**
 * The `sources` field of a message item from its provider citations: absent when none
 * of them is a known shape.
 *
 * @since 0.1.0
 * @category conversions
 */
export const sourcesField = (
  citations: ReadonlyArray<Json.JsonValue>,
  convert: (citation: Json.JsonValue) => OutputItem.Source | undefined
): { readonly sources?: ReadonlyArray<OutputItem.Source> } => {
  const sources = citations.flatMap((citation) => convert(citation) ?? [])
  return sources.length === 0 ? {} : { sources }
}

/**
 * The sources of Gemini's `citationMetadata`: one `url` source per citation source,
 * with the span of the text it recites (`text_start` / `text_end` as Gemini counts
 * them); none for metadata of another shape.
 *
 * @since 0.3.0
 * @category conversions
 */
export const fromGeminiCitations = (metadata: Json.JsonValue): ReadonlyArray<OutputItem.Source> =>
  Option.match(decodeGeminiCitations(metadata), {
    onNone: () => [],
    onSome: (citations) =>
      (citations.citationSources ?? []).map((cited) =>
        source("url", { url: cited.uri, title: cited.title, text_start: cited.startIndex, text_end: cited.endIndex })
      )
  })

/**
 * The sources of Gemini's `groundingMetadata`: one per grounding chunk a support cites,
 * with the supported span of the answer (`text_start` / `text_end` as Gemini counts
 * them, `cited_text` the segment's text); chunks no support cites come after, without a
 * span. A web chunk or a Maps place is a `url` source, a retrieved context a `document`.
 *
 * @since 0.1.0
 * @category conversions
 */
export const fromGeminiGrounding = (grounding: Json.JsonValue): ReadonlyArray<OutputItem.Source> =>
  Option.match(decodeGemini(grounding), {
    onNone: () => [],
    onSome: (metadata) => {
      const chunks = metadata.groundingChunks ?? []
      const chunkSource = (index: number): Fields & { readonly kind: OutputItem.Source["kind"] } | undefined => {
        const chunk = chunks[index]
        if (chunk?.web !== undefined) return { kind: "url", url: chunk.web.uri, title: chunk.web.title }
        if (chunk?.maps !== undefined) return { kind: "url", url: chunk.maps.uri, title: chunk.maps.title }
        if (chunk?.retrievedContext !== undefined) {
          return { kind: "document", url: chunk.retrievedContext.uri, title: chunk.retrievedContext.title }
        }
        return undefined
      }
      const cited = new Set<number>()
      const out: Array<OutputItem.Source> = []
      for (const support of metadata.groundingSupports ?? []) {
        for (const index of support.groundingChunkIndices ?? []) {
          const found = chunkSource(index)
          if (found === undefined) continue
          cited.add(index)
          const { kind, ...fields } = found
          out.push(
            source(kind, {
              ...fields,
              cited_text: support.segment?.text,
              text_start: support.segment?.startIndex,
              text_end: support.segment?.endIndex
            })
          )
        }
      }
      chunks.forEach((_, index) => {
        const found = cited.has(index) ? undefined : chunkSource(index)
        if (found !== undefined) {
          const { kind, ...fields } = found
          out.push(source(kind, fields))
        }
      })
      return out
    }
  })
