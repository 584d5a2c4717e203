-- Take one step of a pending prompt's escalation, once across processes: note when, and queue what it owes
-- (a reminder posted in the thread, copies posted elsewhere, and their events) in the thread's outbox.
-- A settled prompt takes no step. KEYS[2]: the prompt, KEYS[3]: its escalation.
-- ARGV: pid, step, remind (1|0), escalate (1|0)
local pid, step = ARGV[1], tonumber(ARGV[2])
local state = redis.call('HGET', KEYS[2], 'state')
if not state then
  return {'missing'}
end
if state ~= 'pending' then
  return {'settled'}
end
local key = KEYS[3]
if redis.call('HSETNX', key, 's:' .. step, NOW) == 0 then
  return {'taken'}
end
redis.call('HSET', KEYS[2], 'escalated', '1')  -- its settlement gives the escalation its lifetime
local left = redis.call('PTTL', KEYS[2])
if left > 0 then
  redis.call('PEXPIRE', key, left)
end
if ARGV[3] == '1' then
  redis.call('RPUSH', K.chat, cjson.encode({t = 'remind', pid = pid, step = step}))
  redis.call('RPUSH', K.pub, cjson.encode({t = 'reminded', pid = pid, step = step}))
end
if ARGV[4] == '1' then
  redis.call('RPUSH', K.chat, cjson.encode({t = 'escalate', pid = pid, step = step}))
  redis.call('RPUSH', K.pub, cjson.encode({t = 'escalated', pid = pid, step = step}))
end
keep_thread({'chat', 'pub'})
return {'ok'}
