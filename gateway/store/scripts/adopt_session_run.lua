-- Make ARGV[2] the session's run in this thread unless another running run is already it (one a second
-- process started first); ARGV[3] names a stale run ('' for none) that may be replaced even while running.
-- ARGV: session_key, run_id, stale run_id. Returns the session's run id.
local key = P .. 'session-run:' .. ARGV[1]
local current = redis.call('GET', key)
if current and current ~= ARGV[3] and current ~= ARGV[2]
    and redis.call('HGET', P .. 'run:' .. current, 'state') == 'running' then
  redis.call('PEXPIRE', key, IDLE)
  return current
end
redis.call('SET', key, ARGV[2], 'PX', IDLE)
return ARGV[2]
