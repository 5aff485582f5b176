/**
 * The Redis keys of a thread (docs/threads.md). A thread is one stream, its log:
 * `<prefix>:thread:{<threadId>}:log`. The thread id in braces is a Redis Cluster hash
 * tag, so every key of one thread hashes to one slot. Its turns' streams keep their own
 * keys (`TurnKeys`), each in its turn's slot.
 *
 * @since 0.3.0
 */

/**
 * `<prefix>:thread:{<threadId>}:log`: the thread's log, every event of the thread in
 * order (created, turn started, turn ended, turns superseded, deleted).
 *
 * @since 0.3.0
 * @category keys
 */
export const logKey = (prefix: string, threadId: string): string => `${prefix}:thread:{${threadId}}:log`

/**
 * `<prefix>:thread:{<threadId>}:deleted`: the mark a deleted thread leaves for
 * `Threads`' `tombstoneMs`, while its id is not created again.
 *
 * @since 0.3.0
 * @category keys
 */
export const tombstoneKey = (prefix: string, threadId: string): string => `${prefix}:thread:{${threadId}}:deleted`
