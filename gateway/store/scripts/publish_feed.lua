-- Append entries to feeds (streams), each at most once, and drop settled prompts from the indexes: on a
-- cluster one call per partition (whose keys share a slot), on one server one call for the whole publish.
-- An entry whose id was appended within the dedupe window (an outbox drained again after a crash between
-- appending and acknowledging) is skipped. Each feed is capped by count on each append (~: whole nodes);
-- by age, the sweeper trims it (Feeds.trim_feeds), every few seconds, not each append.
-- KEYS: the streams (ARGV[1] of them), then each entry's marker (in the streams' order), then the indexes.
-- ARGV: stream count, marker ttl s; per stream: max length, entry count; the entries' JSON; then per
-- index: member count, the members.
-- Returns each entry's new stream id, or false where it was a duplicate.
local streams, ttl = tonumber(ARGV[1]), tonumber(ARGV[2])
local added, a, k = {}, 3 + 2 * streams, streams + 1
for s = 1, streams do
  local at = 1 + 2 * s
  for _ = 1, tonumber(ARGV[at + 1]) do
    if redis.call('SET', KEYS[k], '1', 'NX', 'EX', ttl) then
      added[#added + 1] = redis.call('XADD', KEYS[s], 'MAXLEN', '~', ARGV[at], '*', 'j', ARGV[a])
    else
      added[#added + 1] = false
    end
    a, k = a + 1, k + 1
  end
end
while k <= #KEYS do
  local last = a + tonumber(ARGV[a])
  for first = a + 1, last, 1000 do  -- unpack takes so many at once
    redis.call('ZREM', KEYS[k], unpack(ARGV, first, math.min(first + 999, last)))
  end
  a, k = last + 1, k + 1
end
return added
