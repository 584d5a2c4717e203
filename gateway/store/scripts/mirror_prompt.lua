-- A copy of another thread's prompt was posted in this thread: replies to it here are handed to that
-- thread (see receive_message.lua) for keep ms; or, with no origin, the prompt settled and its copy is
-- forgotten. The latest copy's slot ('mirror') holds "<prompt id> <its agent>": a typed reply goes to it
-- only while no other agent has a run here. ARGV: pid, origin thread id ('' to forget), keep ms, agent
local pid, origin = ARGV[1], ARGV[2]
if origin == '' then
  redis.call('HDEL', P .. 'mirrors', pid)
  local slot = redis.call('GET', P .. 'mirror')
  if slot and string.match(slot, '^%S+') == pid then
    redis.call('DEL', P .. 'mirror')
  end
  return 0
end
local keep = tonumber(ARGV[3])
redis.call('HSET', P .. 'mirrors', pid, origin)
if redis.call('PTTL', P .. 'mirrors') < keep then
  redis.call('PEXPIRE', P .. 'mirrors', keep)
end
redis.call('SET', P .. 'mirror', pid .. ' ' .. (ARGV[4] or ''), 'PX', keep)
return 1
