-- Start a run in the thread: its record, kept ARGV[2] ms (ending it shortens that to the retain time), and
-- its agent among the thread's owners, and who started it (if anyone) among its readers.
-- KEYS[2]: the run. ARGV: run json, keep ms, agent, started_by ('' for none)
local run_key = KEYS[2]
redis.call('HSET', run_key, 'rec', ARGV[1], 'state', 'running')
redis.call('PEXPIRE', run_key, ARGV[2])
redis.call('SADD', K.agents, ARGV[3])
if ARGV[4] ~= '' then
  redis.call('SADD', K.starters, ARGV[4])
end
keep_thread({'agents', 'starters'})
return 'ok'
