-- Link an identity to a person, or unlink it: the index checked and changed in the same step.
-- KEYS: everyone, the identity index, the person's identities. ARGV: 'link' | 'unlink', person id, identity.
-- Returns {'ok'}, {'missing'} (no such person), {'taken', its person} or {'not_linked'}.
local everyone, index, ids = KEYS[1], KEYS[2], KEYS[3]
local action, person, identity = ARGV[1], ARGV[2], ARGV[3]
if redis.call('SISMEMBER', everyone, person) == 0 then
  return {'missing'}
end
local owner = redis.call('HGET', index, identity)
if action == 'unlink' then
  if owner ~= person then
    return {'not_linked'}
  end
  redis.call('HDEL', index, identity)
  redis.call('SREM', ids, identity)
  return {'ok'}
end
if owner and owner ~= person then
  return {'taken', owner}
end
redis.call('HSET', index, identity, person)
redis.call('SADD', ids, identity)
return {'ok'}
