-- Cancel a pending prompt whose expiry has passed (reason_code expired). ARGV: pid, reason, now ms, retain ms
local pid = ARGV[1]
local key = prompt_key(pid)
local state = redis.call('HGET', key, 'state')
if not state then
  return {'missing'}
end
if state ~= 'pending' then
  return settled_reply(pid)
end
if tonumber(redis.call('HGET', key, 'exp')) > tonumber(ARGV[3]) then
  return {'not_due'}
end
settle(pid, cancel_fields(ARGV[2], 'expired', ARGV[3]), tonumber(ARGV[4]), true)
return {'ok'}
