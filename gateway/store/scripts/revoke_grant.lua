-- Revoke a grant: the record and its uses go; what it was, for the caller to report.
-- KEYS[2]: the run's grants. ARGV: grant_id. Returns {'ok', record json, uses} or {'missing'}.
local key = KEYS[2]
local found = redis.call('HMGET', key, 'g:' .. ARGV[1], 'u:' .. ARGV[1])
if not found[1] then
  return {'missing'}
end
redis.call('HDEL', key, 'g:' .. ARGV[1], 'u:' .. ARGV[1])
return {'ok', found[1], found[2] or '0'}
