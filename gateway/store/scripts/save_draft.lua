-- Merge values into a draft kept for a pending prompt, for ARGV[3] ms more; the prompt settling deletes it.
-- ARGV: prompt id, draft name, ttl ms, then field and value pairs. Returns {'stale'} when the prompt is no
-- longer pending, else {'saved', the whole draft as field and value pairs}.
local pid, key = ARGV[1], P .. 'draft:' .. ARGV[2]
if redis.call('HGET', prompt_key(pid), 'state') ~= 'pending' then
  return {'stale'}
end
if #ARGV > 3 then
  redis.call('HSET', key, unpack(ARGV, 4))
end
if redis.call('EXISTS', key) == 1 then
  redis.call('PEXPIRE', key, ARGV[3])
  local index = P .. 'pd:' .. pid
  redis.call('SADD', index, ARGV[2])
  if redis.call('PTTL', index) < tonumber(ARGV[3]) then
    redis.call('PEXPIRE', index, ARGV[3])
  end
end
return {'saved', redis.call('HGETALL', key)}
