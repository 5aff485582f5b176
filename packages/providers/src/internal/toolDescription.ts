/**
 * A tool's description as every wire API takes it: left out when absent or empty, so
 * that `""` (the first design's default for a tool given without one) and no description send
 * the same request (docs/decisions/tool-description-default.md).
 *
 * @internal
 */
import type { ToolDefinition } from "../request/LlmRequest.js"

/**
 * The `description` key of a tool's wire form, or nothing.
 *
 * @internal
 */
export const describedBy = (tool: ToolDefinition): { readonly description?: string } =>
  tool.description === undefined || tool.description === "" ? {} : { description: tool.description }
