-- Claim a pending prompt for one person, or release it: while the claim lasts only its holder answers
-- (see held_by_other). A claim held by someone else is refused (a release too, unless forced: an operator).
-- KEYS[2]: the prompt's hash.
-- ARGV: pid, 'claim' or 'release', who (what claimed_by records: 'person:<id>' or an identity), alt (the
--       claimant's identity when who is their person, else ''), until ms (a claim), force ('1' or '0'),
--       what the thread is told of a new holder ('' for nothing)
-- Returns {'ok', holder ('' once released), until ('' once released), changed ('1' when the holder or a
-- lapsed claim changed: the event and the thread's notice owed once), {'claimed', holder, until}, or how
-- the prompt settled (see unsettleable).
local pid, mode, who, alt, force = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[6] == '1'
local refused = unsettleable(pid)
if refused then
  return refused
end
local holder, held_until = held_by_other(pid, who, alt)
if holder and not (mode == 'release' and force) then
  return {'claimed', holder, held_until}
end
local key = KEYS[2]
local hash = prompt_hash(pid)
local live = hash.claimed_by and tonumber(hash.claimed_until or '0') > NOW
local seq = redis.call('HINCRBY', key, 'claims', 1)
if mode == 'claim' then
  local changed = not live or hash.claimed_by ~= who
  redis.call('HSET', key, 'claimed_by', who, 'claimed_until', ARGV[5])
  hash.claimed_by, hash.claimed_until = who, ARGV[5]
  if changed then
    owe('pub', {t = 'claimed', pid = pid, by = who, u = ARGV[5], n = seq})
    if ARGV[7] ~= '' then
      owe('chat', {t = 'claimed', pid = pid, by = who, text = ARGV[7]})
    end
    keep_thread({'pub', 'chat'})
  end
  return {'ok', who, ARGV[5], changed and '1' or '0'}
end
if not hash.claimed_by then
  return {'ok', '', '', '0'}
end
redis.call('HDEL', key, 'claimed_by', 'claimed_until')
hash.claimed_by, hash.claimed_until = nil, nil
if live then
  owe('pub', {t = 'claimed', pid = pid, by = false, u = false, n = seq})
  keep_thread({'pub'})
end
return {'ok', '', '', live and '1' or '0'}
