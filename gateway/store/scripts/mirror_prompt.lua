-- A copy of another thread's prompt was posted in this thread: replies to it here are handed to that
-- thread (see receive_message.lua) for keep ms; or, with no origin, the prompt settled and its copy is
-- forgotten. ARGV: pid, origin thread id ('' to forget), keep ms
local pid, origin = ARGV[1], ARGV[2]
if origin == '' then
  redis.call('HDEL', P .. 'mirrors', pid)
  if redis.call('GET', P .. 'mirror') == pid then
    redis.call('DEL', P .. 'mirror')
  end
  return 0
end
local keep = tonumber(ARGV[3])
redis.call('HSET', P .. 'mirrors', pid, origin)
if redis.call('PTTL', P .. 'mirrors') < keep then
  redis.call('PEXPIRE', P .. 'mirrors', keep)
end
redis.call('SET', P .. 'mirror', pid, 'PX', keep)
return 1
