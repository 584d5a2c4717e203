-- Make ARGV[1] the session's run in this thread unless another running run is already it (one a second
-- process started first); ARGV[2] names a stale run ('' for none) that may be replaced even while running.
-- KEYS[2]: the session's run slot in this thread. ARGV: run_id, stale run_id. Returns the session's run id.
local key = KEYS[2]
local current = redis.call('GET', key)
if current and current ~= ARGV[2] and current ~= ARGV[1]
    and redis.call('HGET', P .. ID.run .. current, 'state') == 'running' then
  redis.call('PEXPIRE', key, IDLE)
  return current
end
redis.call('SET', key, ARGV[1], 'PX', IDLE)
return ARGV[1]
