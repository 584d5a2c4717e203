-- Merge values into a draft kept for a pending prompt, for ARGV[2] ms more; the prompt settling deletes it.
-- KEYS[2]: the prompt, KEYS[3]: the draft, KEYS[4]: the prompt's set of draft names.
-- ARGV: draft name, ttl ms, then field and value pairs. Returns {'stale'} when the prompt is no longer
-- pending, else {'saved', the whole draft as field and value pairs}.
local key = KEYS[3]
if redis.call('HGET', KEYS[2], 'state') ~= 'pending' then
  return {'stale'}
end
if #ARGV > 2 then
  redis.call('HSET', key, unpack(ARGV, 3))
end
if redis.call('EXISTS', key) == 1 then
  redis.call('PEXPIRE', key, ARGV[2])
  local index = KEYS[4]
  if redis.call('SADD', index, ARGV[1]) == 1 then
    redis.call('HSET', KEYS[2], 'drafts', '1')  -- the prompt's settlement looks for drafts only then
  end
  if redis.call('PTTL', index) < tonumber(ARGV[2]) then
    redis.call('PEXPIRE', index, ARGV[2])
  end
end
return {'saved', redis.call('HGETALL', key)}
