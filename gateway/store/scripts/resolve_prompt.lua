-- Answer a pending prompt. The first resolution wins; every later caller is told how it settled.
-- Hot when the agent is waiting on the prompt (its watch key is alive); otherwise parked, and the
-- answer is re-driven to the agent as the next turn's tagged message.
-- ARGV: pid, answers json, answered_by, now ms, retain ms, turn id for a parked answer
local pid = ARGV[1]
local state = redis.call('HGET', prompt_key(pid), 'state')
if not state then
  return {'missing'}
end
if state ~= 'pending' then
  return settled_reply(pid)
end
local resolution = 'resolved_hot'
if redis.call('EXISTS', P .. 'w:' .. pid) == 0 then
  resolution = 'resolved_parked'
  redis.call('RPUSH', P .. 'pub', cjson.encode({t = 'parked', pid = pid, turn = ARGV[6]}))
end
local fields = {'state', 'answered', 'answers', ARGV[2], 'answered_by', ARGV[3], 'resolution', resolution,
                'settled_at', ARGV[4]}
if resolution == 'resolved_parked' then
  table.insert(fields, 'turn_id')
  table.insert(fields, ARGV[6])
end
settle(pid, fields, tonumber(ARGV[5]), true)
return {'ok', resolution}
