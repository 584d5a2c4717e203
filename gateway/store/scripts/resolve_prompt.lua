-- Answer a pending prompt. The first resolution wins; every later caller is told how it settled.
-- ARGV: pid, answers json, answered_by, now ms, retain ms, turn id for a parked answer,
--       form content json ('' for none), the decision's opts json ('' for none; see decide)
local pid = ARGV[1]
local refused = unsettleable(pid)
if refused then
  return refused
end
local status, resolution = answer(pid, ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8])
if status ~= 'ok' then
  return {status}
end
return hand_outbox({'ok', resolution})  -- with the outbox's first batch, when claimed and free
