package redisqueue

import (
	"sync"

	"github.com/redis/go-redis/v9"
)

// The Lua scripts make each step of the model atomic. Keys are passed in
// KEYS; the lease's value is "<token> <consumer> <message id>" (consumer
// names hold no space). Tokens travel as decimal strings: Lua numbers are
// doubles, exact for the tokens of [queue.TokenFloor] (below 2^53).

// enqueueLua is the Lua function that adds a message for a session unless
// one waits already: the session's marker holds the ID of its waiting
// message, checked against the stream so that a stale marker does not
// swallow work.
const enqueueLua = `
local function enqueue(q, waiting, sid, markTTL)
  local id = redis.call('GET', waiting)
  if id and #redis.call('XRANGE', q, id, id) > 0 then
    return false
  end
  id = redis.call('XADD', q, '*', 's', sid)
  redis.call('SET', waiting, id, 'PX', markTTL)
  return id
end
`

// enqueueScript: KEYS q, waiting; ARGV session, marker TTL (ms). Returns
// the new message's ID, or 0 when the Enqueue coalesced into a waiting one.
var enqueueScript = sync.OnceValue(func() *redis.Script {
	return redis.NewScript(enqueueLua + `
return enqueue(KEYS[1], KEYS[2], ARGV[1], ARGV[2]) or 0
`)
})

// takeScript runs after this consumer received a message (read or
// reclaimed). KEYS q, waiting, lease, dirty, fence; ARGV group, consumer,
// message ID, lease TTL (ms), fence TTL (ms), marker TTL (ms). Returns
//
//	{0}         the message was acknowledged meanwhile: skip it
//	{1, token}  the lease is this consumer's
//	{2}         the message is the holder's own, reclaimed before its
//	            lease ran out: left pending (the holder's renewal claims it
//	            back; if the holder is dead it is reclaimed after the TTL)
//	{3}         the session is leased: the message is acknowledged and the
//	            session marked dirty, so the holder's Done enqueues it again
var takeScript = sync.OnceValue(func() *redis.Script {
	return redis.NewScript(`
local q, waiting, lease, dirty, fence = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local group, consumer, msg = ARGV[1], ARGV[2], ARGV[3]
if #redis.call('XRANGE', q, msg, msg) == 0 then
  return {0}
end
if redis.call('GET', waiting) == msg then
  redis.call('DEL', waiting)
end
local cur = redis.call('GET', lease)
if cur then
  if string.match(cur, '[^ ]+$') == msg then
    return {2}
  end
  redis.call('SET', dirty, '1', 'PX', ARGV[6])
  redis.call('XACK', q, group, msg)
  redis.call('XDEL', q, msg)
  return {3}
end
local t = redis.call('TIME')
local floor = (tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)) * 1000
local last = tonumber(redis.call('GET', fence) or '0') or 0
local tok = string.format('%.0f', math.max(last + 1, floor))
redis.call('SET', fence, tok, 'PX', ARGV[5])
redis.call('SET', lease, tok .. ' ' .. consumer .. ' ' .. msg, 'PX', ARGV[4])
redis.call('DEL', dirty)
return {1, tok}
`)
})

// renewScript: KEYS lease, q, fence; ARGV lease value, lease TTL (ms),
// group, consumer, message ID, token, fence TTL (ms), session. Returns
//
//	{0}          another holder may have the session: the lease is lost
//	{1}          renewed; the message's idle time is reset (XCLAIM to this
//	             consumer) so that no one reclaims it while the lease lives
//	{2, msg}     Redis had forgotten the lease (it restarted without
//	             persistence) and no one took the session since (its fence
//	             is gone or still this token): taken back, with msg the
//	             lease's message (a new one when the old one is gone)
var renewScript = sync.OnceValue(func() *redis.Script {
	return redis.NewScript(`
local lease, q, fence = KEYS[1], KEYS[2], KEYS[3]
local group, consumer, msg, tok = ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local cur = redis.call('GET', lease)
if cur == ARGV[1] then
  redis.call('PEXPIRE', lease, ARGV[2])
  redis.call('PEXPIRE', fence, ARGV[7])
  redis.pcall('XCLAIM', q, group, consumer, 0, msg, 'JUSTID')
  return {1}
end
if cur then
  return {0}
end
local f = redis.call('GET', fence)
if f and f ~= tok then
  return {0}
end
redis.pcall('XGROUP', 'CREATE', q, group, '0', 'MKSTREAM')
if #redis.call('XRANGE', q, msg, msg) == 0 then
  msg = redis.call('XADD', q, '*', 's', ARGV[8])
else
  redis.pcall('XCLAIM', q, group, consumer, 0, msg, 'JUSTID')
end
redis.call('SET', fence, tok, 'PX', ARGV[7])
redis.call('SET', lease, tok .. ' ' .. consumer .. ' ' .. msg, 'PX', ARGV[2])
return {2, msg}
`)
})

// doneScript: KEYS lease, q, waiting, dirty; ARGV lease value, group,
// message ID, more ("1" or "0"), session, marker TTL (ms), dirty TTL (ms).
// Returns 0 when another holder has the session (more is left to it as
// the dirty mark), 1 when released, 2 when the lease had run out and no
// one held the session: its message is acknowledged all the same. On 1
// and 2 the session is enqueued again when more or dirty.
var doneScript = sync.OnceValue(func() *redis.Script {
	return redis.NewScript(enqueueLua + `
local lease, q, waiting, dirty = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local cur = redis.call('GET', lease)
if cur and cur ~= ARGV[1] then
  if ARGV[4] == '1' then
    redis.call('SET', dirty, '1', 'PX', ARGV[7])
  end
  return 0
end
if cur then
  redis.call('DEL', lease)
end
redis.pcall('XACK', q, ARGV[2], ARGV[3])
redis.call('XDEL', q, ARGV[3])
local again = redis.call('DEL', dirty) == 1 or ARGV[4] == '1'
if again then
  enqueue(q, waiting, ARGV[5], ARGV[6])
end
if cur then
  return 1
end
return 2
`)
})

// statsScript: KEYS q; ARGV group. Returns {entries, pending, ID of the
// oldest undelivered entry or "", TIME seconds, TIME microseconds}.
// Acknowledged entries are deleted, so entries - pending are waiting.
var statsScript = sync.OnceValue(func() *redis.Script {
	return redis.NewScript(`
local q, group = KEYS[1], ARGV[1]
local t = redis.call('TIME')
local n = redis.call('XLEN', q)
if n == 0 then
  return {0, 0, '', t[1], t[2]}
end
local pending, last = 0, '0-0'
local p = redis.pcall('XPENDING', q, group)
if type(p) == 'table' and not p.err then
  pending = p[1]
  for _, g in ipairs(redis.call('XINFO', 'GROUPS', q)) do
    local name, ld
    for i = 1, #g, 2 do
      if g[i] == 'name' then name = g[i + 1] elseif g[i] == 'last-delivered-id' then ld = g[i + 1] end
    end
    if name == group then last = ld end
  end
end
local first = redis.call('XRANGE', q, '(' .. last, '+', 'COUNT', 1)
local id = ''
if #first > 0 then id = first[1][1] end
return {n, pending, id, t[1], t[2]}
`)
})

// sweepScript drops the consumers of the group that hold no pending
// message and were idle longer than ARGV[2] ms (ARGV[3] = "" for all of
// them, or one consumer's name). KEYS q; ARGV group, idle, name. Checking
// and dropping in one script keeps a consumer that just received a
// message.
var sweepScript = sync.OnceValue(func() *redis.Script {
	return redis.NewScript(`
local q, group, idle, only = KEYS[1], ARGV[1], tonumber(ARGV[2]), ARGV[3]
local cs = redis.pcall('XINFO', 'CONSUMERS', q, group)
if type(cs) ~= 'table' or cs.err then
  return 0
end
local n = 0
for _, c in ipairs(cs) do
  local name, pending, inactive
  for i = 1, #c, 2 do
    if c[i] == 'name' then name = c[i + 1]
    elseif c[i] == 'pending' then pending = c[i + 1]
    elseif c[i] == 'idle' then inactive = c[i + 1] end
  end
  if pending == 0 and inactive and inactive >= idle and (only == '' or only == name) then
    redis.call('XGROUP', 'DELCONSUMER', q, group, name)
    n = n + 1
  end
end
return n
`)
})
