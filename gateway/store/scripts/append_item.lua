-- Append an entry to the thread's item log (capped near ARGV[1] entries); with a prompt id and a message
-- id, also note where that prompt was posted. ARGV: log max length, entry json, [prompt id, message id]
if ARGV[3] then
  redis.call('HSET', prompt_key(ARGV[3]), 'msg', ARGV[4])
end
local id = redis.call('XADD', P .. 'items', 'MAXLEN', '~', ARGV[1], '*', 'j', ARGV[2])
keep_thread({'items'})
return id
