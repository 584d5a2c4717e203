-- Record a grant for the rest of a run, once the approval that makes it has settled the prompt: the run
-- is still running and the prompt was answered Approve, in that run, by the grant's maker. The run's
-- grants are one hash (g:<id> the record, u:<id> its uses); it never outlives the run's own key, and
-- ending the run deletes it. KEYS[2]: the run, KEYS[3]: the prompt, KEYS[4]: the run's grants.
-- ARGV: run_id, grant_id, record json, created_by, max grants per run
local run_id, gid = ARGV[1], ARGV[2]
local run_key = KEYS[2]
if redis.call('HGET', run_key, 'state') ~= 'running' then
  return {'run_ended'}
end
local prompt = redis.call('HMGET', KEYS[3], 'state', 'run', 'answered_by', 'answers')
if prompt[1] ~= 'answered' or prompt[2] ~= run_id or prompt[3] ~= ARGV[4] or not prompt[4] then
  return {'not_approved'}
end
local answers = cjson.decode(prompt[4])
if #answers ~= 1 or #answers[1].answer ~= 1 or answers[1].answer[1] ~= 'Approve' then
  return {'not_approved'}
end
local key = KEYS[4]
if redis.call('HLEN', key) >= 2 * tonumber(ARGV[5]) then
  return {'full'}
end
redis.call('HSET', key, 'g:' .. gid, ARGV[3], 'u:' .. gid, 0)
local left = redis.call('PTTL', run_key)
if left > 0 then
  redis.call('PEXPIRE', key, left)
end
return {'ok'}
