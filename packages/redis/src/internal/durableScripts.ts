/**
 * The Lua scripts of the live durable store: each runs as one atomic step on Redis.
 *
 * @internal
 */

// KEYS: meta, data, sig. ARGV: expected version, the number of settings, field and
// value of each, the number of appends, the bytes of each, the expiry mode
// (persist|after|at) and its value. Replies {0} on a version conflict, else {1, ids...}.
/** @internal */
export const commitScript = `
local meta, data, sig = KEYS[1], KEYS[2], KEYS[3]
local expect = tonumber(ARGV[1])
local current = tonumber(redis.call('HGET', meta, 'v') or '0')
if current ~= expect then return {0} end
if expect == 0 then redis.call('DEL', data, sig) end
local n = tonumber(redis.call('HGET', meta, 'n') or '0')
local fields = {}
local i = 3
for _ = 1, tonumber(ARGV[2]) do
  fields[#fields + 1] = ARGV[i]
  fields[#fields + 1] = ARGV[i + 1]
  i = i + 2
end
local appends = tonumber(ARGV[i])
i = i + 1
local result = {1}
for _ = 1, appends do
  n = n + 1
  local id = '0-' .. n
  redis.call('XADD', data, id, 'd', ARGV[i])
  result[#result + 1] = id
  i = i + 1
end
local signal = redis.call('XADD', sig, 'MAXLEN', '1', '*', 'v', tostring(current + 1))
fields[#fields + 1] = 'v'
fields[#fields + 1] = tostring(current + 1)
fields[#fields + 1] = 'n'
fields[#fields + 1] = tostring(n)
fields[#fields + 1] = 'tail'
fields[#fields + 1] = '0-' .. n
fields[#fields + 1] = 's'
fields[#fields + 1] = signal
redis.call('HSET', meta, unpack(fields))
local mode, value = ARGV[i], ARGV[i + 1]
for _, key in ipairs(KEYS) do
  if mode == 'persist' then redis.call('PERSIST', key)
  elseif mode == 'after' then redis.call('PEXPIRE', key, value)
  else redis.call('PEXPIREAT', key, value) end
end
return result
`

// KEYS: meta, data, sig. ARGV: the expiry mode and value. Sets the expiry of a stream
// that exists.
/** @internal */
export const touchScript = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
for _, key in ipairs(KEYS) do
  if ARGV[1] == 'persist' then redis.call('PERSIST', key)
  elseif ARGV[1] == 'after' then redis.call('PEXPIRE', key, ARGV[2])
  else redis.call('PEXPIREAT', key, ARGV[2]) end
end
return 1
`

// KEYS: meta, data, sig. Deletes the stream and leaves a short-lived signal that wakes
// its waiting readers. Replies whether it existed.
/** @internal */
export const removeScript = `
local existed = redis.call('EXISTS', KEYS[1])
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('XADD', KEYS[3], 'MAXLEN', '1', '*', 'v', 'deleted')
redis.call('PEXPIRE', KEYS[3], 60000)
return existed
`
