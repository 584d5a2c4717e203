-- Queue one delivery per URL for an event, unless that (event id, URL) pair was queued before.
-- KEYS[1]: the webhook queue's prefix (every key below shares its hash tag).
-- ARGV: now ms, dedupe ttl s, body, then delivery id and URL pairs. Returns how many were queued.
local P, now, ttl, body = KEYS[1], ARGV[1], tonumber(ARGV[2]), ARGV[3]
local queued = 0
for i = 4, #ARGV, 2 do
  local id, url = ARGV[i], ARGV[i + 1]
  if redis.call('SET', P .. 's:' .. id, '1', 'NX', 'EX', ttl) then
    redis.call('HSET', P .. 'd:' .. id, 'url', url, 'body', body, 'attempts', 0, 'first', now)
    redis.call('ZADD', P .. 'due', now, id)
    queued = queued + 1
  end
end
return queued
