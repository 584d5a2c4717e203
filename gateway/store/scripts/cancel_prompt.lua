-- Cancel a pending prompt with a reason, and who cancelled it.
-- ARGV: pid, reason, reason_code, now ms, retain ms, audit (1|0), cancelled by ('' for no person)
local pid = ARGV[1]
local refused = unsettleable(pid)
if refused then
  return refused
end
settle(pid, cancel_fields(ARGV[2], ARGV[3], ARGV[4], ARGV[7]), tonumber(ARGV[5]), ARGV[6] == '1')
return {'ok'}
