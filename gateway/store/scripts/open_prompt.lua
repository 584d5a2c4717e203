-- Open a prompt as the thread's one active prompt, cancelling (superseding) the one it replaces.
-- KEYS[2]: the prompt, KEYS[3]: its record, KEYS[4]: its run.
-- ARGV: pid, run_id, record json, now ms, expires_at ms, retain ms, supersede reason, agent
-- A pending prompt (its hash and record) is kept until its expiry plus retain ms, as its index is; the
-- sweeper settles it at its expiry, which shortens that to retain ms. Its run is kept as long, and the
-- run's agent owns the thread again (its ownership lapses with a thread idle that long).
local pid, run_id, rec, now, expires_at, retain = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
-- A retry of this very call (its reply lost with the connection) finds the prompt already opened.
if redis.call('EXISTS', KEYS[2]) == 1 then
  return {'ok', ''}
end
local run_state = redis.call('HGET', KEYS[4], 'state')
if not run_state then
  return {'no_run'}
end
if run_state ~= 'running' then
  return {'run_ended'}
end
local superseded = ''
local old = active_id()
if old and redis.call('HGET', prompt_key(old), 'state') == 'pending' then
  settle(old, cancel_fields(ARGV[7], 'superseded', now), tonumber(retain), true)
  superseded = old
end
local keep_ms = math.max(tonumber(expires_at) - tonumber(now), 0) + tonumber(retain)
redis.call('SET', KEYS[3], rec, 'PX', keep_ms)
redis.call('HSET', KEYS[2], 'state', 'pending', 'run', run_id, 'exp', expires_at, 'escalated', '0')
redis.call('PEXPIRE', KEYS[2], keep_ms)
local run_left = redis.call('PTTL', KEYS[4])
if run_left >= 0 and run_left < keep_ms then
  redis.call('PEXPIRE', KEYS[4], keep_ms)
end
if ARGV[8] and ARGV[8] ~= '' then
  redis.call('SADD', K.agents, ARGV[8])
end
set_active(pid)
owe('pub', {t = 'requested', pid = pid})
keep_thread({'agents', 'pub'})
return {'ok', superseded}
