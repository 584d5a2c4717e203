-- Note where an escalation step posted a copy of the prompt, so its outcome reaches that copy too; kept as
-- long as the prompt. ARGV: pid, field ('c:<step>:<target>'), value ('<thread id> <message id>')
local pid = ARGV[1]
local left = redis.call('PTTL', prompt_key(pid))
if left <= 0 then
  return 0
end
local key = P .. 'e:' .. pid
redis.call('HSET', key, ARGV[2], ARGV[3])
if redis.call('PTTL', key) < left then
  redis.call('PEXPIRE', key, left)
end
return 1
