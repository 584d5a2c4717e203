-- A prompt's fields with its record, read in one step (the two keys are never seen half-expired); with a
-- watch time, a pending prompt is also marked as waited on (its answer then resolves hot).
-- KEYS[2]: the prompt, KEYS[3]: its watch mark. ARGV: pid, watch ttl ms (optional, 0 or absent for none)
local pid = ARGV[1]
local watch_ms = tonumber(ARGV[2] or '0')
if watch_ms > 0 and redis.call('HGET', KEYS[2], 'state') == 'pending' then
  redis.call('SET', KEYS[3], '1', 'PX', watch_ms)
end
return prompt_fields(pid)
