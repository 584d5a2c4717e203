-- Give up a held key (a thread's answer admission, a lease), only if this caller still holds it: a hold
-- that lapsed may be someone else's by now.
-- KEYS[1]: the held key. ARGV: the holder's token
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
