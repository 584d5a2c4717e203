-- Note where an escalation step posted a copy of the prompt, so its outcome reaches that copy too; kept as
-- long as the prompt. KEYS[2]: the prompt, KEYS[3]: its escalation.
-- ARGV: field ('c:<step>:<target>'), value ('<thread id> <message id>')
local left = redis.call('PTTL', KEYS[2])
if left <= 0 then
  return 0
end
local key = KEYS[3]
redis.call('HSET', key, ARGV[1], ARGV[2])
if redis.call('PTTL', key) < left then
  redis.call('PEXPIRE', key, left)
end
return 1
