-- Remove a person: their record, their identities from the index, and their pending link codes' owner.
-- KEYS: the directory's prefix. ARGV: person id. Returns 1 when there was one, else 0.
local P, person = KEYS[1], ARGV[1]
local ids = P .. 'i:' .. person
for _, identity in ipairs(redis.call('SMEMBERS', ids)) do
  if redis.call('HGET', P .. 'idx', identity) == person then
    redis.call('HDEL', P .. 'idx', identity)
  end
end
redis.call('DEL', ids, P .. 'p:' .. person)
return redis.call('SREM', P .. 'all', person)
