-- Record a grant for the rest of a run, once the approval that makes it has settled the prompt: the run
-- is still running and the prompt was answered Approve, in that run, by the grant's maker. An answer that
-- carried the grant kept it already (or found why not, see decide): that stands, so a grant revoked since
-- is not made again. KEYS[2]: the run, KEYS[3]: the prompt, KEYS[4]: the run's grants (keep_grant names
-- the same two from the run id).
-- ARGV: run_id, grant_id, record json, created_by, max grants per run
local run_id, gid = ARGV[1], ARGV[2]
if redis.call('HGET', KEYS[2], 'state') ~= 'running' then
  return {'run_ended'}
end
local prompt = redis.call('HMGET', KEYS[3], 'state', 'run', 'answered_by', 'answers', 'granted', 'no_grant')
if prompt[1] ~= 'answered' or prompt[2] ~= run_id or prompt[3] ~= ARGV[4] or not prompt[4] then
  return {'not_approved'}
end
local answers = cjson.decode(prompt[4])
if #answers ~= 1 or #answers[1].answer ~= 1 or answers[1].answer[1] ~= 'Approve' then
  return {'not_approved'}
end
if prompt[5] and cjson.decode(prompt[5]).grant_id == gid then
  return {'ok'}
end
if prompt[6] then
  return {prompt[6]}
end
local kept = keep_grant(run_id, gid, ARGV[3], tonumber(ARGV[5]))
if kept == 'ok' then
  redis.call('HSET', KEYS[3], 'granted', ARGV[3])
end
return {kept}
