/**
 * Thread ids and what a client reads of a thread token, with no dependency (the browser
 * client imports it alone): the one rule the thread store, the server, thread tokens and
 * the chat transport share (docs/threads.md).
 *
 * @since 0.3.0
 */

/**
 * The longest thread id: 128 characters.
 *
 * @since 0.3.0
 * @category constants
 */
export const maxThreadIdLength = 128

const threadIdPattern = /^[A-Za-z0-9._:-]+$/

/**
 * What a thread id is, in a sentence (the reason of every error about one).
 *
 * @since 0.3.0
 * @category constants
 */
export const threadIdRule = `a thread id is 1 to ${maxThreadIdLength} letters, digits, '.', '_', ':' or '-'`

/**
 * Whether a string is a thread id: 1 to `maxThreadIdLength` letters, digits, `.`, `_`,
 * `:` or `-`.
 *
 * @since 0.3.0
 * @category guards
 */
export const isThreadId = (text: string): boolean =>
  text.length > 0 && text.length <= maxThreadIdLength && threadIdPattern.test(text)

/**
 * When a thread token (`th1.<expiresAt>.<scope>.<threadId>.<mac>`) expires, in ms since
 * the epoch, read without checking its signature (what a client needs to ask for a new
 * one in time); `undefined` for a text of another form. The server verifies the whole
 * token.
 *
 * @since 0.3.0
 * @category parsing
 */
export const threadTokenExpiresAt = (token: string): number | undefined => {
  const match = /^th1\.(\d{1,16})\./.exec(token)
  return match === null ? undefined : Number(match[1])
}
