-- Forget a drained thread in the outbox's dirty set, unless it was marked again after the cutoff.
-- KEYS[1]: the dirty set. ARGV: thread id, cutoff ms
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) <= tonumber(ARGV[2]) then
  return redis.call('ZREM', KEYS[1], ARGV[1])
end
return 0
