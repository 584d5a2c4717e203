-- Link an identity to a person, or unlink it: the index checked and changed in the same step.
-- KEYS: the directory's prefix. ARGV: 'link' | 'unlink', person id, identity.
-- Returns {'ok'}, {'missing'} (no such person), {'taken', its person} or {'not_linked'}.
local P, action, person, identity = KEYS[1], ARGV[1], ARGV[2], ARGV[3]
if redis.call('SISMEMBER', P .. 'all', person) == 0 then
  return {'missing'}
end
local owner = redis.call('HGET', P .. 'idx', identity)
if action == 'unlink' then
  if owner ~= person then
    return {'not_linked'}
  end
  redis.call('HDEL', P .. 'idx', identity)
  redis.call('SREM', P .. 'i:' .. person, identity)
  return {'ok'}
end
if owner and owner ~= person then
  return {'taken', owner}
end
redis.call('HSET', P .. 'idx', identity, person)
redis.call('SADD', P .. 'i:' .. person, identity)
return {'ok'}
