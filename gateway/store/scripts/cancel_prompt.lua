-- Cancel a pending prompt with a reason, and who cancelled it.
-- ARGV: pid, reason, reason_code, now ms, retain ms, audit (1|0), cancelled by ('' for no person), the
--       decision's opts json ('' for none; its person: a claim held by another refuses a person's cancel)
local pid = ARGV[1]
local refused = unsettleable(pid)
if refused then
  return refused
end
if ARGV[7] ~= '' and held_against(pid, ARGV[7], ARGV[8]) then
  return {'claimed'}
end
settle(pid, cancel_fields(ARGV[2], ARGV[3], ARGV[4], ARGV[7]), tonumber(ARGV[5]), ARGV[6] == '1')
return {'ok'}
