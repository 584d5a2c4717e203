-- Extend a lease still ours; a lapsed one is not taken back. KEYS[1]: the lease. ARGV: holder, ttl ms
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
