-- Start a run in the thread: its record, kept ARGV[3] ms (ending it shortens that to the retain time), and
-- its agent among the thread's owners, and who started it (if anyone) among its readers.
-- ARGV: run_id, run json, keep ms, agent, started_by ('' for none)
local run_key = P .. 'run:' .. ARGV[1]
redis.call('HSET', run_key, 'rec', ARGV[2], 'state', 'running')
redis.call('PEXPIRE', run_key, ARGV[3])
redis.call('SADD', P .. 'agents', ARGV[4])
if ARGV[5] ~= '' then
  redis.call('SADD', P .. 'starters', ARGV[5])
end
keep_thread({'agents', 'starters'})
return 'ok'
