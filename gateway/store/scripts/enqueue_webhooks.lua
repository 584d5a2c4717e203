-- Queue one delivery per URL for an event, unless that (event id, URL) pair was queued before.
-- KEYS[1]: the queue's due set, then per delivery its queued mark and its record (all in the queue's
-- hash tag). ARGV: now ms, dedupe ttl s, body, then delivery id and URL pairs. Returns how many were queued.
local now, ttl, body = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local queued = 0
for i = 4, #ARGV, 2 do
  local id, url, k = ARGV[i], ARGV[i + 1], i - 2
  if redis.call('SET', KEYS[k], '1', 'NX', 'EX', ttl) then
    redis.call('HSET', KEYS[k + 1], 'url', url, 'body', body, 'attempts', 0, 'first', now)
    redis.call('ZADD', KEYS[1], now, id)
    queued = queued + 1
  end
end
return queued
