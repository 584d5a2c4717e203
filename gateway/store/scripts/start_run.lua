-- Start a run in the thread: its record, kept ARGV[3] ms (ending it shortens that to the retain time), and
-- its agent among the thread's owners. ARGV: run_id, run json, keep ms, agent
local run_key = P .. 'run:' .. ARGV[1]
redis.call('HSET', run_key, 'rec', ARGV[2], 'state', 'running')
redis.call('PEXPIRE', run_key, ARGV[3])
redis.call('SADD', P .. 'agents', ARGV[4])
keep_thread()
return 'ok'
