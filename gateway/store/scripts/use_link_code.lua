-- Spend a link code: the identity typing it is linked to the code's person, once. The spent code is kept
-- (as who used it) until it would have expired, so a platform's redelivery of the same message is told
-- 'ok' again rather than refused.
-- A code typed where others could read it ('exposed') links nothing and is spent all the same, kept as
-- exposed by that identity so a redelivery is told the same.
-- KEYS: the code, everyone, the identity index. ARGV: identity, what precedes a person's id in the key of
-- their identities (the person is known only once the code is read; the key shares the directory's slot),
-- '1' when the code was exposed.
-- Returns {'ok', person}, {'unknown'} (never issued, or expired), {'used'}, {'taken', its person} or
-- {'exposed'}.
local key, everyone, index = KEYS[1], KEYS[2], KEYS[3]
local identity, ids_of, exposed = ARGV[1], ARGV[2], ARGV[3] == '1'
local stored = redis.call('GET', key)
if not stored then
  return {'unknown'}
end
local state, person, used_by = string.match(stored, '^(%S+) (%S+) ?(.*)$')
if state == 'used' then
  if exposed and used_by == '!' .. identity then
    return {'exposed'}
  end
  if used_by == identity and redis.call('HGET', index, identity) == person then
    return {'ok', person}
  end
  return {'used'}
end
if exposed then
  redis.call('SET', key, 'used ' .. person .. ' !' .. identity, 'KEEPTTL')
  return {'exposed'}
end
if redis.call('SISMEMBER', everyone, person) == 0 then
  redis.call('DEL', key)
  return {'unknown'}
end
local owner = redis.call('HGET', index, identity)
if owner and owner ~= person then
  return {'taken', owner}
end
redis.call('HSET', index, identity, person)
redis.call('SADD', ids_of .. person, identity)
redis.call('SET', key, 'used ' .. person .. ' ' .. identity, 'KEEPTTL')
return {'ok', person}
