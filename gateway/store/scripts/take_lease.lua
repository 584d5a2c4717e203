-- Take a lease if it is free, or still ours: after Redis restarted from its AOF the key can outlive the
-- holder's own hold, which was dropped when renewals failed; waiting out the TTL would leave the channel idle.
-- KEYS[1]: the lease. ARGV: holder, ttl ms
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
