-- Claim due escalation steps by pushing their due time one lease ahead: a process that dies before taking
-- a step leaves it to be claimed again when the lease runs out (taking it is once: take_escalation.lua).
-- KEYS[1]: the schedule. ARGV: now ms, lease ms, count. Returns the claimed "<prompt id>:<step>" entries.
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
local until_ms = tonumber(ARGV[1]) + tonumber(ARGV[2])
for _, entry in ipairs(due) do
  redis.call('ZADD', KEYS[1], until_ms, entry)
end
return due
