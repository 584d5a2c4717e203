-- Cancel a pending prompt whose expiry has passed (reason_code expired). ARGV: pid, reason, now ms, retain ms
local pid = ARGV[1]
local refused = unsettleable(pid)
if refused then
  return refused
end
if tonumber(redis.call('HGET', prompt_key(pid), 'exp')) > tonumber(ARGV[3]) then
  return {'not_due'}
end
settle(pid, cancel_fields(ARGV[2], 'expired', ARGV[3]), tonumber(ARGV[4]), true)
return {'ok'}
