-- Spend a link code: the identity typing it is linked to the code's person, once. The spent code is kept
-- (as who used it) until it would have expired, so a platform's redelivery of the same message is told
-- 'ok' again rather than refused.
-- KEYS: the directory's prefix. ARGV: code, identity.
-- Returns {'ok', person}, {'unknown'} (never issued, or expired), {'used'} or {'taken', its person}.
local P, code, identity = KEYS[1], ARGV[1], ARGV[2]
local key = P .. 'code:' .. code
local stored = redis.call('GET', key)
if not stored then
  return {'unknown'}
end
local state, person, used_by = string.match(stored, '^(%S+) (%S+) ?(.*)$')
if state == 'used' then
  if used_by == identity and redis.call('HGET', P .. 'idx', identity) == person then
    return {'ok', person}
  end
  return {'used'}
end
if redis.call('SISMEMBER', P .. 'all', person) == 0 then
  redis.call('DEL', key)
  return {'unknown'}
end
local owner = redis.call('HGET', P .. 'idx', identity)
if owner and owner ~= person then
  return {'taken', owner}
end
redis.call('HSET', P .. 'idx', identity, person)
redis.call('SADD', P .. 'i:' .. person, identity)
redis.call('SET', key, 'used ' .. person .. ' ' .. identity, 'KEEPTTL')
return {'ok', person}
