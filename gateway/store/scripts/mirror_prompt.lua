-- A copy of another thread's prompt was posted in this thread: replies to it here are handed to that
-- thread (see receive_message.lua) for keep ms; or, with no origin, the prompt settled and its copy is
-- forgotten. The latest copy's slot ('mirror') holds "<prompt id> <its agent>": a typed reply goes to it
-- only while no other agent has a run here. KEYS[2]: the thread's copies (prompt id -> origin),
-- KEYS[3]: the latest copy's slot. ARGV: pid, origin thread id ('' to forget), keep ms, agent
local pid, origin, mirrors, slot_key = ARGV[1], ARGV[2], KEYS[2], KEYS[3]
if origin == '' then
  redis.call('HDEL', mirrors, pid)
  local slot = redis.call('GET', slot_key)
  if slot and string.match(slot, '^%S+') == pid then
    redis.call('DEL', slot_key)
  end
  return 0
end
local keep = tonumber(ARGV[3])
redis.call('HSET', mirrors, pid, origin)
if redis.call('PTTL', mirrors) < keep then
  redis.call('PEXPIRE', mirrors, keep)
end
redis.call('SET', slot_key, pid .. ' ' .. (ARGV[4] or ''), 'PX', keep)
return 1
