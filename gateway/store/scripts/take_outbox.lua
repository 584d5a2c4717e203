-- Drain a thread's outbox under its lock, in one step per pass: acknowledge what the last pass delivered
-- (trim both lists, log the posted items), then hand back the next batch with the prompts it names, or
-- release the lock once nothing is left (so nothing queued meanwhile is stranded until a sweep).
-- Mode renew only extends a lock still ours (a long pass keeps it; a lapsed one is not taken back).
-- ARGV: token, lock ttl ms, mode (acquire|continue|release|renew), pub done, chat done, batch size,
--       item log max length, then the log entries of the posted items
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
for i = 8, #ARGV do
  redis.call('XADD', K.items, 'MAXLEN', '~', ARGV[7], '*', 'j', ARGV[i])
end
-- The log's lifetime, when it is already within a hundredth of a whole one, was set by the write that
-- queued these items (an opened prompt's writes set it past the prompt's expiry): only then is it kept.
if #ARGV >= 8 and redis.call('PTTL', K.items) < IDLE - IDLE / 100 then
  keep_thread({'items'})
end
if tonumber(ARGV[5]) > 0 then
  redis.call('LTRIM', K.chat, ARGV[5], -1)
end
if mode == 'release' or redis.call('EXISTS', K.pub, K.chat) == 0 then
  redis.call('DEL', lock)
  return {'released'}
end
return outbox_batch(tonumber(ARGV[6]), ARGV[2])
