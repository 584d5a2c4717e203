-- Count one use of a grant still in force (not revoked, its run still running); its uses so far.
-- ARGV: run_id, grant_id. Returns {'ok', uses} or {'gone'}.
local key = P .. 'grants:' .. ARGV[1]
if redis.call('HGET', P .. 'run:' .. ARGV[1], 'state') ~= 'running' then
  return {'gone'}
end
if redis.call('HEXISTS', key, 'g:' .. ARGV[2]) == 0 then
  return {'gone'}
end
return {'ok', redis.call('HINCRBY', key, 'u:' .. ARGV[2], 1)}
