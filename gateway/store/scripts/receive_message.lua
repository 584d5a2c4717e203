-- A person's message reaches the thread: drop a duplicate delivery, then answer the active prompt, queue the
-- message as the agent's next turn, or hand the active prompt back to the caller to decide on.
-- The platform event is marked seen only in the step that applies its effect (the answer, the queued
-- message, the stale or refused outcome), together with logging the message: a process that dies after
-- being handed the prompt back leaves nothing marked, and the platform's redelivery is answered in full.
-- (The mark is set first, with SET NX, which also says whether the event was seen before; a call that
-- hands the message back removes it again before it returns.)
-- KEYS[2]: the event's seen mark, KEYS[3]: the thread's copies of other threads' prompts, KEYS[4]: the
-- latest copy's slot.
-- ARGV: event_id ('' for none), dedupe ttl s, prompt id the control was for ('' for none),
--       message json, log max length, mode, then its prompt id, against ('guess' or 'handed', see below)
--       and for an answer: answers json, answered_by, now ms, retain ms, turn id, form content json ('' for
--       none), cancel code and reason ('' for an answer: set, the reply cancels the prompt instead, see
--       below), the decision's opts json ('' for none; see decide: a vote may leave the prompt pending).
-- Modes (what the caller decided on that prompt): '' (nothing decided yet); 'answer' (the reply answers
-- it); 'refuse' (the sender may not answer it); 'keep' (the reply leaves it pending: a form's step, or a
-- value not taken).
-- Against: 'guess', the prompt the caller believes is active (the latest it saw): applied only while it is
-- the active prompt and pending (its record never changes, so the caller read the reply against the
-- prompt as it is; its votes are counted here), else decided as a message nobody read yet, which hands
-- the active prompt back; or 'handed', the prompt this script handed back: an answer to it that settled
-- meanwhile learns how it settled, a refusal or a kept reply is logged as it stands.
-- An answer's reply carries the outbox's first batch when the caller claimed it (see hand_outbox).
-- {'mirror', thread, prompt id}: the message is for a copy of that thread's prompt (see mirror_prompt.lua).
local event_id, hint, msg, mode, pid = ARGV[1], ARGV[3], ARGV[4], ARGV[6] or '', ARGV[7] or ''
local guessed = ARGV[8] == 'guess'
local seen_key, mirrors = KEYS[2], KEYS[3]
if event_id ~= '' and not redis.call('SET', seen_key, '1', 'NX', 'EX', tonumber(ARGV[2])) then
  return {'duplicate'}
end

-- The message is handed back (or to another thread) with its effect not applied: not seen yet.
local function unmark(reply)
  if event_id ~= '' then
    redis.call('DEL', seen_key)
  end
  return reply
end

-- The event's effect is applied: from now on a redelivery is a duplicate (marked above), and the message
-- is in the log. ``later``: the thread's lifetimes are set by the settlement that follows, in this call.
local function take(later)
  log_item(msg, ARGV[5])
  if later then
    keep_later({'pub'})
  else
    keep_thread({'pub'})
  end
end

local active = active_id()
if hint ~= '' and hint ~= active then
  -- A control on a copy of another thread's prompt (posted here by an escalation): that thread decides.
  local origin = redis.call('HGET', mirrors, hint)
  if origin then
    return unmark({'mirror', origin, hint})
  end
  return {'stale', active or ''}
end
local pending = active and prompt_hash(active).state == 'pending'
if guessed and not (pending and pid == active) then
  -- The prompt the caller read the reply against settled or was superseded meanwhile: what it decided
  -- does not apply, and the message is decided as one nobody read (the active prompt handed back).
  mode = ''
end
if mode == 'refuse' then
  take()
  return {'refused'}
end
if mode == 'keep' then
  take()
  return {'kept'}
end
local cancel_code = ARGV[15] or ''
if cancel_code ~= '' and mode == 'answer' then
  -- Seed 002: the reply cancels the prompt instead of answering it. A new message that supersedes it is
  -- queued as the next turn's message in the same step, also when the prompt settled meanwhile.
  if pending and pid == active then
    if cancel_code == 'declined' and held_against(active, ARGV[10], ARGV[17]) then
      take()
      return {'claimed'}
    end
    take()
    -- A decline is the sender's; a new message supersedes the prompt on nobody's behalf.
    local by = cancel_code ~= 'new_message' and ARGV[10] or ''
    settle(active, cancel_fields(ARGV[16], cancel_code, ARGV[11], by), tonumber(ARGV[12]), true)
    if cancel_code == 'new_message' then
      owe('pub', {t = 'message', m = msg})
    end
    return {'cancelled'}
  end
  if cancel_code == 'new_message' then  -- to the prompt handed back (a guess that missed has no mode)
    owe('pub', {t = 'message', m = msg})
    take()  -- after the push: the outbox list it may have created gets the thread's lifetime
    return {'queued'}
  end
end
if pending and mode == 'answer' and pid == active then
  take(true)
  local status, resolution = answer(active, ARGV[9], ARGV[10], ARGV[11], ARGV[12], ARGV[13], ARGV[14], ARGV[17])
  if not KEPT then  -- the decision left the prompt as it was: the logged message still keeps the thread
    keep_thread()
  end
  if status ~= 'ok' then
    return {status}
  end
  return hand_outbox({'answered', resolution})
end
if mode == 'answer' then
  -- The prompt handed back settled (or was superseded) between the two calls: the message answered it.
  take()
  if redis.call('EXISTS', prompt_key(pid)) == 0 then
    return {'missing'}
  end
  return settled_reply(pid)
end
if pending then
  return unmark({'active', active, prompt_record(active)})
end
-- No prompt of the thread's own is open: a reply to the latest copy of another thread's prompt posted
-- here is handed to that thread, nothing marked here. Never while another agent has a run in this thread
-- (a slot written before copies named their agent counts every run as another's): the message is that
-- agent's, queued for it below.
do  -- (every mode but '' returned above)
  local copy, agent = string.match(redis.call('GET', KEYS[4]) or '', '^(%S+) ?(%S*)$')
  local origin = copy and redis.call('HGET', mirrors, copy)
  if origin then
    local others = false
    for _, owner in ipairs(redis.call('SMEMBERS', K.agents)) do
      others = others or owner ~= agent
    end
    if not others then
      return unmark({'mirror', origin, copy})
    end
  end
end
owe('pub', {t = 'message', m = msg})
take()  -- after the push: the outbox list it may have created gets the thread's lifetime
return {'queued'}
