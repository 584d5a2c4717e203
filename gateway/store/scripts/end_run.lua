-- End a run and cancel its pending prompt; the ended run is kept retain ms, its grants end with it.
-- KEYS[2]: the run, KEYS[3]: its grants.
-- ARGV: run_id, reason, now ms, retain ms, reason code (run_ended when absent; aborted for an abort)
local run_key = KEYS[2]
if redis.call('EXISTS', run_key) == 0 then
  return {'no_run'}
end
redis.call('HSET', run_key, 'state', 'ended', 'ended_at', ARGV[3])
redis.call('PEXPIRE', run_key, ARGV[4])
redis.call('DEL', KEYS[3])
local cancelled = ''
local active = active_id()
if active then
  local fields = redis.call('HMGET', prompt_key(active), 'state', 'run')
  if fields[1] == 'pending' and fields[2] == ARGV[1] then
    settle(active, cancel_fields(ARGV[2], ARGV[5] or 'run_ended', ARGV[3]), tonumber(ARGV[4]), true)
    cancelled = active
  end
end
keep_thread()
return {'ok', cancelled}
