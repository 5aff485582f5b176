/**
 * `@sluice/client/ai-sdk`: `useChat` on the turn server. `SluiceChatTransport` is a
 * `ChatTransport` for the AI SDK (`ai` 7, an optional peer dependency: only its types
 * are imported) that starts turns with `POST /v1/turns`, reads them as UI message
 * streams, resumes a chat's running turn where the chat left off and cancels it on
 * stop.
 *
 * @since 0.3.0
 */

/**
 * @since 0.3.0
 */
export {
  type ActiveTurn,
  type ChatTurnStorage,
  defaultStorage,
  type FollowThreadOptions,
  type HeadersInit,
  memoryStorage,
  type ReconnectRequest,
  type RunningTurn,
  type SendMessagesRequest,
  SluiceChatTransport,
  type SluiceChatTransportOptions,
  type ThreadEvent,
  type ThreadOptions,
  type ThreadSnapshot,
  type ThreadTokenSource,
  type ThreadToolResult,
  type ThreadTurnFields,
  type ThreadTurnStarted,
  toTurnConversation,
  type TurnAssistantPart,
  type TurnConversation,
  turnIdHeader,
  type TurnMessage,
  type TurnRequestFields,
  type TurnTool,
  type TurnToolResult,
  type WebStorage,
  webStorage
} from "./ChatTransport.js"

/**
 * @since 0.3.0
 */
export { ClientError, type ClientErrorCode } from "./ClientError.js"
