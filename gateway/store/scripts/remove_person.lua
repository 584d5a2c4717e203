-- Remove a person: their record, and their identities from the index.
-- KEYS: everyone, the identity index, the person's identities, their record. ARGV: person id.
-- Returns 1 when there was one, else 0.
local everyone, index, ids, record = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local person = ARGV[1]
for _, identity in ipairs(redis.call('SMEMBERS', ids)) do
  if redis.call('HGET', index, identity) == person then
    redis.call('HDEL', index, identity)
  end
end
redis.call('DEL', ids, record)
return redis.call('SREM', everyone, person)
