/**
 * `xaddAll` on a live Redis in one round trip: a Lua script that runs each entry's
 * `XADD` with `redis.pcall`, so every entry succeeds or fails on its own, exactly as
 * the same commands in a pipeline would, and replies with one element per entry: the
 * new id, or the error text behind a `!` (ids never start with one).
 *
 * Arguments: `KEYS[1]` the stream; `ARGV[1]` the `MAXLEN ~` cap or an empty string;
 * then per entry its id, the number of field and value strings, and those strings.
 *
 * @internal
 */
import { createHash } from "node:crypto"
import type { XAddEntry, XAddOptions } from "../RedisStreams.js"

/** @internal */
export const source = `local key = KEYS[1]
local maxLen = ARGV[1]
local out = {}
local i = 2
while i <= #ARGV do
  local id = ARGV[i]
  local last = i + 1 + tonumber(ARGV[i + 1])
  local reply
  if maxLen == "" then
    reply = redis.pcall("XADD", key, id, unpack(ARGV, i + 2, last))
  else
    reply = redis.pcall("XADD", key, "MAXLEN", "~", maxLen, id, unpack(ARGV, i + 2, last))
  end
  if type(reply) == "table" and reply.err then
    out[#out + 1] = "!" .. reply.err
  else
    out[#out + 1] = reply
  end
  i = last + 1
end
return out
`

/** @internal */
export const sha1 = createHash("sha1").update(source).digest("hex")

/**
 * The script's arguments after the script itself: `1 key maxLen (id n strings...)*`.
 *
 * @internal
 */
export const args = (key: string, entries: ReadonlyArray<XAddEntry>, options: XAddOptions | undefined): Array<string | number> => {
  const out: Array<string | number> = [1, key, options?.maxLen === undefined ? "" : options.maxLen]
  for (const entry of entries) {
    out.push(entry.id, entry.fields.length * 2)
    for (const [field, value] of entry.fields) out.push(field, value)
  }
  return out
}

/** @internal */
export const errorMark = "!"
