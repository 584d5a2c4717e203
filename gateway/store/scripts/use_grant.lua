-- Count one use of a grant still in force (not revoked, its run still running); its uses so far.
-- KEYS[2]: the run's grants, KEYS[3]: the run. ARGV: grant_id. Returns {'ok', uses} or {'gone'}.
local key = KEYS[2]
if redis.call('HGET', KEYS[3], 'state') ~= 'running' then
  return {'gone'}
end
if redis.call('HEXISTS', key, 'g:' .. ARGV[1]) == 0 then
  return {'gone'}
end
return {'ok', redis.call('HINCRBY', key, 'u:' .. ARGV[1], 1)}
