-- Claim due deliveries by pushing their due time one lease ahead: a process that dies mid-delivery
-- leaves them to be claimed again when the lease runs out.
-- KEYS[1]: the webhook queue's prefix. ARGV: now ms, lease ms, count. Returns the claimed ids.
local P = KEYS[1]
local ids = redis.call('ZRANGEBYSCORE', P .. 'due', '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
local until_ms = tonumber(ARGV[1]) + tonumber(ARGV[2])
for _, id in ipairs(ids) do
  redis.call('ZADD', P .. 'due', until_ms, id)
end
return ids
