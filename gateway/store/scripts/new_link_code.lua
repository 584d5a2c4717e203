-- Issue a one-time link code for a person, unless they asked for too many this window.
-- KEYS: everyone, the person's code window (a counter), the code.
-- ARGV: person id, code ttl ms, most codes per window, window ms.
-- Returns {'ok'}, {'missing'} (no such person) or {'limited', ms left in the window}.
local everyone, window, code = KEYS[1], KEYS[2], KEYS[3]
local person = ARGV[1]
if redis.call('SISMEMBER', everyone, person) == 0 then
  return {'missing'}
end
local count = redis.call('INCR', window)
if count == 1 or redis.call('PTTL', window) < 0 then
  redis.call('PEXPIRE', window, ARGV[4])
end
if count > tonumber(ARGV[3]) then
  return {'limited', redis.call('PTTL', window)}
end
redis.call('SET', code, 'new ' .. person, 'PX', ARGV[2])
return {'ok'}
