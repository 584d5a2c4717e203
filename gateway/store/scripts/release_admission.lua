-- Give up a thread's answer admission, only if this caller still holds it (a lapsed one may be another's).
-- KEYS[1]: the thread's admission key. ARGV: the holder's token
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
