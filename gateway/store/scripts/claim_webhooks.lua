-- Claim due deliveries by pushing their due time one lease ahead: a process that dies mid-delivery
-- leaves them to be claimed again when the lease runs out.
-- KEYS[1]: the queue's due set. ARGV: now ms, lease ms, count. Returns the claimed ids.
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
local until_ms = tonumber(ARGV[1]) + tonumber(ARGV[2])
for _, id in ipairs(ids) do
  redis.call('ZADD', KEYS[1], until_ms, id)
end
return ids
