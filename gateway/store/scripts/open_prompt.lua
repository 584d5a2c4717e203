-- Open a prompt as the thread's one active prompt, cancelling (superseding) the one it replaces.
-- ARGV: pid, run_id, record json, now ms, expires_at ms, retain ms, supersede reason
local pid, run_id, rec, now, expires_at, retain = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
-- A retry of this very call (its reply lost with the connection) finds the prompt already opened.
if redis.call('EXISTS', prompt_key(pid)) == 1 then
  return {'ok', ''}
end
local run_state = redis.call('HGET', P .. 'run:' .. run_id, 'state')
if not run_state then
  return {'no_run'}
end
if run_state ~= 'running' then
  return {'run_ended'}
end
local superseded = ''
local old = redis.call('GET', P .. 'active')
if old and redis.call('HGET', prompt_key(old), 'state') == 'pending' then
  settle(old, cancel_fields(ARGV[7], 'superseded', now), tonumber(retain), true)
  superseded = old
end
redis.call('SET', record_key(pid), rec)
redis.call('HSET', prompt_key(pid), 'state', 'pending', 'run', run_id, 'exp', expires_at)
redis.call('SET', P .. 'active', pid)
redis.call('RPUSH', P .. 'pub', cjson.encode({t = 'requested', pid = pid}))
return {'ok', superseded}
