-- Create or replace a person: their record, their identities, and the identity index, in one step, so
-- an identity belongs to at most one person even when two writes race.
-- KEYS: everyone (set), the identity index (hash), the person's identities (set), their record.
-- ARGV: person id, record JSON, then each identity.
-- Returns {'ok', created (1|0)} or {'taken', identity, its person}.
local everyone, index, ids, record = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local person = ARGV[1]
for i = 3, #ARGV do
  local owner = redis.call('HGET', index, ARGV[i])
  if owner and owner ~= person then
    return {'taken', ARGV[i], owner}
  end
end
local created = redis.call('SADD', everyone, person)
for _, identity in ipairs(redis.call('SMEMBERS', ids)) do
  redis.call('HDEL', index, identity)
end
redis.call('DEL', ids)
for i = 3, #ARGV do
  redis.call('HSET', index, ARGV[i], person)
  redis.call('SADD', ids, ARGV[i])
end
redis.call('SET', record, ARGV[2])
return {'ok', created}
