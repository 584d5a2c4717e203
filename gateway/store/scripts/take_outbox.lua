-- Drain a thread's outbox under its lock, in one step per pass: acknowledge what the last pass delivered
-- (trim both lists, log the posted items), then hand back the next batch with the prompts it names, or
-- release the lock once nothing is left (so nothing queued meanwhile is stranded until a sweep).
-- Mode renew only extends a lock still ours (a long pass keeps it; a lapsed one is not taken back).
-- On one Redis server the acknowledged events are appended to their feeds here, in the step that takes
-- them off the list, so each is appended once with no marker of its own (on a cluster the feeds live in
-- other slots: publish_feed.lua appends them first, each once by its marker).
-- KEYS[2..]: the feeds of those events.
-- ARGV: token, lock ttl ms, mode (acquire|continue|release|renew), pub done, chat done, batch size,
--       item log max length, the count of log entries, the log entries of the posted items, then per event:
--       its feed (an index into KEYS), the feed's length cap, its JSON
local lock = K.lock
local token, mode = ARGV[1], ARGV[3]
local holder = redis.call('GET', lock)
if holder ~= token then
  if holder or mode ~= 'acquire' then
    return {'busy'}
  end
  redis.call('SET', lock, token, 'PX', ARGV[2])
end
if mode == 'renew' then
  redis.call('PEXPIRE', lock, ARGV[2])
  return {'renewed'}
end
if tonumber(ARGV[4]) > 0 then
  redis.call('LTRIM', K.pub, ARGV[4], -1)
end
local logged = 9 + tonumber(ARGV[8])
for i = 9, logged - 1 do
  log_item(ARGV[i], ARGV[7])
end
for i = logged, #ARGV, 3 do
  redis.call('XADD', KEYS[tonumber(ARGV[i])], 'MAXLEN', '~', ARGV[i + 1], '*', 'j', ARGV[i + 2])
end
-- The posted items keep the lifetime the write that queued them gave the thread (a thread's lifetimes are
-- never shortened): only a log they create is given it.
if LOGGED then
  keep_thread()
end
if tonumber(ARGV[5]) > 0 then
  redis.call('LTRIM', K.chat, ARGV[5], -1)
end
if mode == 'release' or redis.call('EXISTS', K.pub, K.chat) == 0 then
  redis.call('DEL', lock)
  return {'released'}
end
return outbox_batch(tonumber(ARGV[6]), ARGV[2])
