-- Append an entry to the thread's item log (capped near ARGV[1] entries); with a prompt and a message id,
-- also note where that prompt was posted.
-- KEYS[2]: the item log, KEYS[3]: the posted prompt (absent for none). ARGV: log max length, entry json,
-- [message id]
if KEYS[3] then
  redis.call('HSET', KEYS[3], 'msg', ARGV[3])
end
local id = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[1], '*', 'j', ARGV[2])
keep_thread({'items'})
return id
