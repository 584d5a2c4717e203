-- A person's message reaches the thread: drop a duplicate delivery, log it, then either hand back the
-- active prompt (the message is its answer) or queue the message as the agent's next turn.
-- When the caller already knows the active prompt, found the sender allowed to answer it and mapped the
-- message against it, the answer is settled here too: one round trip for the whole reply.
-- ARGV: event_id ('' for none), dedupe ttl s, prompt id the control was for ('' for none),
--       message json, log max length,
--       then for a ready answer: its prompt id ('' for none), answers json, answered_by, now ms,
--       retain ms, turn id
local event_id, hint, msg = ARGV[1], ARGV[3], ARGV[4]
if event_id ~= '' then
  if not redis.call('SET', P .. 'd:' .. event_id, '1', 'NX', 'EX', tonumber(ARGV[2])) then
    return {'duplicate'}
  end
end
local active = redis.call('GET', P .. 'active')
if hint ~= '' and hint ~= active then
  return {'stale', active or ''}
end
redis.call('XADD', P .. 'items', 'MAXLEN', '~', ARGV[5], '*', 'j', msg)
if active then
  if redis.call('HGET', prompt_key(active), 'state') == 'pending' then
    if ARGV[6] and ARGV[6] == active then
      return {'answered', answer(active, ARGV[7], ARGV[8], ARGV[9], ARGV[10], ARGV[11])}
    end
    return {'active', active, prompt_record(active)}
  end
end
redis.call('RPUSH', P .. 'pub', cjson.encode({t = 'message', m = msg}))
return {'queued'}
