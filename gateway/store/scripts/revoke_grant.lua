-- Revoke a grant: the record and its uses go; what it was, for the caller to report. ARGV: run_id, grant_id
-- Returns {'ok', record json, uses} or {'missing'}.
local key = P .. 'grants:' .. ARGV[1]
local found = redis.call('HMGET', key, 'g:' .. ARGV[2], 'u:' .. ARGV[2])
if not found[1] then
  return {'missing'}
end
redis.call('HDEL', key, 'g:' .. ARGV[2], 'u:' .. ARGV[2])
return {'ok', found[1], found[2] or '0'}
