-- Append entries to one feed (a stream), each at most once: an entry whose id was appended within the
-- dedupe window (an outbox drained again after a crash between appending and acknowledging) is skipped.
-- The feed is capped by count on each append (~: whole nodes) and by age with an exact XTRIM MINID (each
-- entry is removed once, by whichever append finds it too old: constant work per append, on average).
-- KEYS[1]: the feed; KEYS[i + 1]: entry i's marker, in the feed's slot.
-- ARGV: max length, oldest id kept (ms), marker ttl s, then the entries' JSON.
-- Returns each entry's new stream id, or false where it was a duplicate.
local feed, maxlen, ttl = KEYS[1], ARGV[1], tonumber(ARGV[3])
local added = {}
for i = 4, #ARGV do
  if redis.call('SET', KEYS[i - 2], '1', 'NX', 'EX', ttl) then
    added[i - 3] = redis.call('XADD', feed, 'MAXLEN', '~', maxlen, '*', 'j', ARGV[i])
  else
    added[i - 3] = false
  end
end
redis.call('XTRIM', feed, 'MINID', ARGV[2])
return added
