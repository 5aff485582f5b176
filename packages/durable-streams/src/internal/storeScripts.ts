/**
 * The Lua scripts of the live durable store: each runs as one atomic step on Redis,
 * on the keys of one stream (one hash slot). Every script takes the stream's keys in
 * the order meta, data, sig, forks.
 *
 * @internal
 */

// Shared by the scripts: the server's time, whether a stream is over (deleted, or past
// its deadline `dl`), its deadline as the expiry sets it, the expiry of its keys (a
// stream that forks read never expires sooner than it would: `keep`), and its removal.
const prelude = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function over(meta)
  if redis.call('HGET', meta, 'del') == '1' then return true end
  local dl = redis.call('HGET', meta, 'dl')
  return dl ~= false and tonumber(dl) <= now_ms()
end
local function deadline(meta, mode, value)
  if mode == 'persist' then redis.call('HDEL', meta, 'dl')
  elseif mode == 'after' then redis.call('HSET', meta, 'dl', tostring(now_ms() + tonumber(value)))
  else redis.call('HSET', meta, 'dl', value) end
end
local function expire(mode, value, keep)
  local target = nil
  if mode == 'after' then target = now_ms() + tonumber(value)
  elseif mode == 'at' then target = tonumber(value) end
  if keep then
    local left = redis.call('PTTL', KEYS[1])
    if left == -1 then target = nil
    elseif target ~= nil and left >= 0 and now_ms() + left > target then target = now_ms() + left end
  end
  for _, key in ipairs(KEYS) do
    if target == nil then redis.call('PERSIST', key) else redis.call('PEXPIREAT', key, target) end
  end
end
local function wipe()
  local src = redis.call('HGET', KEYS[1], 'src') or ''
  local lnk = redis.call('HGET', KEYS[1], 'lnk') or ''
  redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
  redis.call('XADD', KEYS[3], 'MAXLEN', '1', '*', 'v', 'deleted')
  redis.call('PEXPIRE', KEYS[3], 60000)
  return {src, lnk}
end
`

// No ARGV. Replies {} for no stream, else {now, number of forks, field, value, ...}.
/** @internal */
export const loadScript = `${prelude}
local all = redis.call('HGETALL', KEYS[1])
if #all == 0 then return {} end
local reply = {tostring(now_ms()), tostring(redis.call('HLEN', KEYS[4]))}
for _, item in ipairs(all) do reply[#reply + 1] = item end
return reply
`

// ARGV: the signal a reader waits from. Replies {1, -1} when there is nothing to wait
// for (the stream does not exist, is over, or has changed since that signal), else
// {0, the milliseconds left before its deadline} ({0, -1}: it has none).
/** @internal */
export const waitScript = `${prelude}
if redis.call('EXISTS', KEYS[1]) == 0 then return {1, -1} end
if (redis.call('HGET', KEYS[1], 's') or '0-0') ~= ARGV[1] or over(KEYS[1]) then return {1, -1} end
local dl = redis.call('HGET', KEYS[1], 'dl')
if dl == false then return {0, -1} end
return {0, tonumber(dl) - now_ms()}
`

// ARGV: an entry id and a count. Replies {source, fork point, entries}: the stream's
// own entries after the id (XRANGE), with its fork point ('' '' for no fork); for a fork
// read from before its fork point, no entries (the read starts in its source).
/** @internal */
export const readScript = `
local function digits_before(x, y)
  if #x ~= #y then return #x < #y end
  return x < y
end
local function id_before(a, b)
  local da, db = string.find(a, '-', 1, true), string.find(b, '-', 1, true)
  local am, bm = string.sub(a, 1, da - 1), string.sub(b, 1, db - 1)
  if am ~= bm then return digits_before(am, bm) end
  return digits_before(string.sub(a, da + 1), string.sub(b, db + 1))
end
local src = redis.call('HGET', KEYS[1], 'src') or ''
local at = redis.call('HGET', KEYS[1], 'at') or ''
if src ~= '' and at ~= '' and id_before(ARGV[1], at) then return {src, at, {}} end
return {src, at, redis.call('XRANGE', KEYS[2], '(' .. ARGV[1], '+', 'COUNT', ARGV[2])}
`

// ARGV: expected version, expiry mode (persist|after|at) and value, then for a fork's
// creation its source, fork point, link token and first entry number ('' otherwise),
// the number of settings, field and value of each, the number of appends, the bytes of
// each. A stream that is over and that no fork reads counts as absent. Replies {0} on a
// version conflict, else {1, ids...}.
/** @internal */
export const commitScript = `${prelude}
local meta, data, sig, forks = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local expect = tonumber(ARGV[1])
local current = tonumber(redis.call('HGET', meta, 'v') or '0')
local linked = redis.call('HLEN', forks) > 0
if current ~= 0 and not linked and over(meta) then
  redis.call('DEL', meta, data, sig, forks)
  current = 0
end
if current ~= expect then return {0} end
local n = tonumber(redis.call('HGET', meta, 'n') or '0')
local fields = {}
if expect == 0 then
  linked = false
  redis.call('DEL', data, sig, forks)
  if ARGV[4] ~= '' then
    n = tonumber(ARGV[7])
    fields = {'src', ARGV[4], 'at', ARGV[5], 'lnk', ARGV[6]}
  end
end
local i = 9
for _ = 1, tonumber(ARGV[8]) do
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
deadline(meta, ARGV[2], ARGV[3])
expire(ARGV[2], ARGV[3], linked)
return result
`

// ARGV: the expiry mode and value. Sets the expiry of a stream that exists.
/** @internal */
export const touchScript = `${prelude}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
deadline(KEYS[1], ARGV[1], ARGV[2])
expire(ARGV[1], ARGV[2], redis.call('HLEN', KEYS[4]) > 0)
return 1
`

// ARGV: the expiry mode and value of a fork that reads this stream. Extends the
// stream's expiry to cover it (never shortens it). Replies this stream's own source
// ('' for none) so that the caller goes on up the chain.
/** @internal */
export const extendScript = `${prelude}
if redis.call('EXISTS', KEYS[1]) == 0 then return '' end
expire(ARGV[1], ARGV[2], true)
return redis.call('HGET', KEYS[1], 'src') or ''
`

// ARGV: the fork's link field, the fork point's entry number (-1: past every entry),
// the fork's expiry mode and value, the deepest level a fork may be. Links a fork to
// this stream if it exists, is not over, is not that deep already and holds the fork
// point, and extends its expiry to cover the fork's. Replies {'linked', depth},
// {'missing'}, {'gone'}, {'deep', depth} or {'beyond', tail}, depth being this stream's
// level in its chain of forks (0: no fork; a fork made before levels were kept: 1).
/** @internal */
export const linkScript = `${prelude}
if redis.call('EXISTS', KEYS[1]) == 0 then return {'missing'} end
if over(KEYS[1]) then
  if redis.call('HLEN', KEYS[4]) > 0 then return {'gone'} end
  return {'missing'}
end
local depth = redis.call('HGET', KEYS[1], 'dp')
if depth == false then
  if redis.call('HEXISTS', KEYS[1], 'src') == 1 then depth = '1' else depth = '0' end
end
if tonumber(depth) + 1 > tonumber(ARGV[5]) then return {'deep', depth} end
local n = tonumber(redis.call('HGET', KEYS[1], 'n') or '0')
local at = tonumber(ARGV[2])
if at < 0 or at > n then return {'beyond', '0-' .. n} end
redis.call('HSET', KEYS[4], ARGV[1], tostring(now_ms()))
expire(ARGV[3], ARGV[4], true)
return {'linked', depth}
`

// ARGV: a fork's link field, the value it must still have ('': any) and how old (ms) it
// must be at least. Unlinks the fork; a stream over with no fork left is removed, else
// it expires on its own again. Replies {'removed', source, link} (source '' when it was
// no fork) or {'kept'}.
/** @internal */
export const unlinkScript = `${prelude}
local linked = redis.call('HGET', KEYS[4], ARGV[1])
if ARGV[2] ~= '' and linked ~= ARGV[2] then return {'kept'} end
if linked and now_ms() - tonumber(linked) < tonumber(ARGV[3]) then return {'kept'} end
redis.call('HDEL', KEYS[4], ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HLEN', KEYS[4]) > 0 then return {'kept'} end
if over(KEYS[1]) then
  local gone = wipe()
  return {'removed', gone[1], gone[2]}
end
local dl = redis.call('HGET', KEYS[1], 'dl')
if dl then
  for _, key in ipairs(KEYS) do redis.call('PEXPIREAT', key, dl) end
end
return {'kept'}
`

// No ARGV. Deletes the stream: only marks it deleted while forks read it (its readers
// wake). Replies {'removed', source, link}, {'soft'}, {'gone'} or {'missing', source,
// link} (what was left of a stream already over).
/** @internal */
export const removeScript = `${prelude}
if redis.call('EXISTS', KEYS[1]) == 0 then return {'missing', '', ''} end
local linked = redis.call('HLEN', KEYS[4]) > 0
if over(KEYS[1]) then
  if linked then return {'gone'} end
  local gone = wipe()
  return {'missing', gone[1], gone[2]}
end
if linked then
  local v = tostring(tonumber(redis.call('HGET', KEYS[1], 'v') or '0') + 1)
  local signal = redis.call('XADD', KEYS[3], 'MAXLEN', '1', '*', 'v', v)
  redis.call('HSET', KEYS[1], 'del', '1', 'v', v, 's', signal)
  return {'soft'}
end
local gone = wipe()
return {'removed', gone[1], gone[2]}
`
