-- Issue a one-time link code for a person, unless they asked for too many this window.
-- KEYS: the directory's prefix. ARGV: person id, code, code ttl ms, most codes per window, window ms.
-- Returns {'ok'}, {'missing'} (no such person) or {'limited', ms left in the window}.
local P, person, code = KEYS[1], ARGV[1], ARGV[2]
if redis.call('SISMEMBER', P .. 'all', person) == 0 then
  return {'missing'}
end
local window = P .. 'codes:' .. person
local count = redis.call('INCR', window)
if count == 1 or redis.call('PTTL', window) < 0 then
  redis.call('PEXPIRE', window, ARGV[5])
end
if count > tonumber(ARGV[4]) then
  return {'limited', redis.call('PTTL', window)}
end
redis.call('SET', P .. 'code:' .. code, 'new ' .. person, 'PX', ARGV[3])
return {'ok'}
