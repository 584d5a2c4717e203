-- Shared by every script. KEYS[1] is the thread's key prefix "tg:{<thread_id>}:"; every key a script
-- touches starts with it, so the whole script stays in one Redis Cluster slot. A script's own keys follow
-- in KEYS; the keys it finds while running (the active prompt's, a prompt an outbox entry names) are named
-- from the prefix by the tables K (the thread's keys) and ID (what precedes a prompt's or run's id), which
-- scripts.py writes in from gateway/store/keys.py: no key name is spelled in Lua.
local P = KEYS[1]
-- K, ID, SETTLED: written here by scripts.py
-- Every thread script is called with two leading arguments, taken off here so each script's own ARGV
-- starts at 1: the caller's clock (ms) and how long the thread's keys live after its last write (ms).
local NOW = tonumber(table.remove(ARGV, 1))
local IDLE = tonumber(table.remove(ARGV, 1))
-- The third is '' or an outbox claim "<token> <lock ttl ms> <batch size>": a settling script then takes the
-- thread's outbox lock for the caller in the same step, if it is free, and hands back the first batch
-- (see hand_outbox), which saves the caller a step of its own to acquire it.
local OUTBOX = table.remove(ARGV, 1)

-- The thread's active prompt id (false: none), read once per call: every script writes it through
-- set_active, so the value kept here stays true.
local ACTIVE = nil
local function active_id()
  if ACTIVE == nil then
    ACTIVE = redis.call('GET', K.active)
  end
  return ACTIVE
end

local function set_active(pid)  -- false: the thread has none
  if pid then
    redis.call('SET', K.active, pid)
  else
    redis.call('DEL', K.active)
  end
  ACTIVE = pid
end

-- What this call queued on the outbox lists ('pub', 'chat') and each list's length after its last push:
-- where the two agree, the list holds just what this call queued (it was empty before, or did not exist),
-- so handing it back needs no read.
local QUEUED = {pub = {}, chat = {}}
local LENGTH = {}
local function owe(name, effect)
  local raw = cjson.encode(effect)
  table.insert(QUEUED[name], raw)
  LENGTH[name] = redis.call('RPUSH', K[name], raw)
end

local function created(name)  -- whether this call created the list (it has no lifetime yet)
  return QUEUED[name] ~= nil and LENGTH[name] == #QUEUED[name]
end

-- Prompts this call found to have no escalation steps (their escalation hash is missing).
local NO_ESCALATION = {}

-- Prompts' hashes this call read whole (field -> value), kept in step with its own writes to them, so a
-- call reads a prompt's hash once however often it looks at it.
local HASHES = {}

local function prompt_key(pid)
  return P .. ID.prompt .. pid
end

-- The immutable record (the prompt's JSON, most of its bytes) has its own string key: in the hash it would
-- exceed hash-max-listpack-value and turn the whole hash into the far larger hashtable encoding.
local function record_key(pid)
  return P .. ID.record .. pid
end

-- The record; a prompt stored before the record had its own key keeps it in the hash's 'rec' field.
local function prompt_record(pid)
  return redis.call('GET', record_key(pid)) or redis.call('HGET', prompt_key(pid), 'rec')
end

local function prompt_hash(pid)
  local hash = HASHES[pid]
  if not hash then
    hash = {}
    local flat = redis.call('HGETALL', prompt_key(pid))
    for i = 1, #flat, 2 do
      hash[flat[i]] = flat[i + 1]
    end
    HASHES[pid] = hash
  end
  return hash
end

-- The hash's fields plus 'rec', the record, and 'esc', the escalation steps it took (a JSON array of
-- their field and value pairs, when it took any): everything a prompt is rebuilt from.
local function prompt_fields(pid)
  local fields = {}
  local hash = prompt_hash(pid)
  local lapsed = hash.claimed_until and tonumber(hash.claimed_until) <= NOW  -- a claim past: nobody's
  for name, value in pairs(hash) do
    if not (lapsed and (name == 'claimed_by' or name == 'claimed_until')) then
      table.insert(fields, name)
      table.insert(fields, value)
    end
  end
  local rec = redis.call('GET', record_key(pid))
  if rec then
    table.insert(fields, 'rec')
    table.insert(fields, rec)
  end
  local esc = NO_ESCALATION[pid] and {} or redis.call('HGETALL', P .. ID.escalation .. pid)
  if #esc > 0 then
    table.insert(fields, 'esc')
    table.insert(fields, cjson.encode(esc))
  end
  return fields
end

-- The first ``size`` entries of an outbox list: what this call queued, when that is the whole list.
local function listed(name, size)
  if created(name) and #QUEUED[name] <= size then
    return QUEUED[name]
  end
  return redis.call('LRANGE', K[name], 0, size - 1)
end

-- The next batch of the thread's outbox under the lock the caller holds now: {'batch', pub events, chat
-- posts, the fields of every prompt they name}, or {'released'} (the lock freed) when both lists are empty.
-- ``taken``: the lock was set this call (with its TTL), so it needs no renewal.
local function outbox_batch(size, ttl, taken)
  local lock = K.lock
  local pub = listed('pub', size)
  local chat = listed('chat', size)
  if #pub == 0 and #chat == 0 then
    redis.call('DEL', lock)
    return {'released'}
  end
  if not taken then
    redis.call('PEXPIRE', lock, ttl)
  end
  local prompts, seen = {}, {}
  for _, list in ipairs({pub, chat}) do
    for _, raw in ipairs(list) do
      local pid = cjson.decode(raw).pid
      if pid and not seen[pid] then
        seen[pid] = true
        table.insert(prompts, pid)
        table.insert(prompts, prompt_fields(pid))
      end
    end
  end
  return {'batch', pub, chat, prompts}
end

-- ``reply`` with the outbox's first batch appended, taken under the caller's claim (OUTBOX) when it made
-- one and the lock is free; otherwise ``reply`` as it is, and the caller drains the thread the usual way.
local function hand_outbox(reply)
  local token, ttl, size = string.match(OUTBOX or '', '^(%S+) (%d+) (%d+)$')
  if not token or not redis.call('SET', K.lock, token, 'NX', 'PX', ttl) then
    return reply
  end
  local batch = outbox_batch(tonumber(size), ttl, true)
  if batch[1] == 'batch' then
    table.insert(reply, batch)
  end
  return reply
end

-- The thread's long-lived keys (its item log, its owners and starters, its session mark, its outbox lists)
-- live IDLE ms after its last write, and while a prompt is pending IDLE ms past that prompt's expiry, so they
-- outlive it. Each write makes that lifetime longer where it is a hundredth of IDLE past what they were last
-- given, and never shorter: a prompt that settles leaves the thread the lifetime its opening gave it (up to
-- the prompt's expiry plus IDLE), which spares every settlement rewriting them, and a busy thread does not
-- rewrite its expiries (and the AOF) on every write. When they were last given one is kept in the key
-- 'keep' (which dies with them): a write they already outlive reads only it, and gives any key it names in
-- ``fresh`` that it created (an outbox list emptied and refilled, a new log) the same expiry.
-- A write from outside the scripts to one of these keys deletes 'keep', so the next write sets them all.
-- keep_later(fresh) names keys for the call's next keep_thread to treat as fresh, when a write is
-- followed by another that sets the lifetimes (a message logged, then the answer it gave).
local LONG_LIVED = {'items', 'agents', 'starters', 'session', 'chat', 'pub'}
local KEEP_FRESH = {}
local KEPT = false
local LOGGED = false  -- the item log was created by this call (see log_item)
local function keep_later(fresh)
  for _, name in ipairs(fresh) do
    table.insert(KEEP_FRESH, name)
  end
end

-- Whether a key named fresh may have no lifetime: an outbox list this call pushed to (owe) only where it
-- created it, the log where log_item created it; any other key where it has none.
local function unkept(name)
  if name == 'items' and LOGGED then
    return true
  end
  if QUEUED[name] and #QUEUED[name] > 0 then
    return created(name)
  end
  return redis.call('PTTL', K[name]) == -1
end

-- ``outlived``: when the thread's keys are known to live at least until then (ms), without reading 'keep'.
local function keep_thread(fresh, outlived)
  KEPT = true
  for _, name in ipairs(fresh or {}) do
    table.insert(KEEP_FRESH, name)
  end
  fresh, KEEP_FRESH = KEEP_FRESH, {}
  local ms = IDLE
  local active = active_id()
  if active then
    local hash = HASHES[active]
    local exp = tonumber(hash and hash.exp or redis.call('HGET', prompt_key(active), 'exp'))
    if exp and exp - NOW + IDLE > ms then
      ms = exp - NOW + IDLE
    end
  end
  local at = NOW + ms
  local kept = outlived
  if not (kept and kept >= at - IDLE / 100) then
    kept = tonumber(redis.call('GET', K.keep))
  end
  if kept and kept >= at - IDLE / 100 then
    local given = {}
    for _, name in ipairs(fresh) do
      if not given[name] and unkept(name) then
        redis.call('PEXPIRE', K[name], math.max(kept - NOW, 1))
      end
      given[name] = true
    end
    return
  end
  for _, name in ipairs(LONG_LIVED) do  -- relative to the caller's clock, as 'keep' is: never absolute
    redis.call('PEXPIRE', K[name], ms)
  end
  redis.call('SET', K.keep, at, 'PX', ms)
end

-- Append an entry to the thread's item log (capped at about ``maxlen``). An append to the log that exists
-- keeps its lifetime; one that creates it names it fresh for the call's next keep_thread.
local function log_item(entry, maxlen)
  if not redis.call('XADD', K.items, 'NOMKSTREAM', 'MAXLEN', '~', maxlen, '*', 'j', entry) then
    redis.call('XADD', K.items, 'MAXLEN', '~', maxlen, '*', 'j', entry)
    LOGGED = true
    table.insert(KEEP_FRESH, 'items')
  end
end

-- Drop the drafts kept for a prompt (a form's values so far, a pending text request): they die with it.
-- save_draft.lua marks a prompt that has any ('drafts' in its hash); one saved before that mark existed
-- lives out its own lifetime.
local function drop_drafts(pid)
  if not prompt_hash(pid).drafts then
    return
  end
  local index = P .. ID.drafts .. pid
  local names = redis.call('SMEMBERS', index)
  for _, name in ipairs(names) do
    redis.call('DEL', P .. ID.draft .. name)
  end
  if #names > 0 then
    redis.call('DEL', index)
  end
end

-- Settle a pending prompt: record how (kept retain_ms), drop its drafts, free the thread, queue its audit
-- item and its event, wake waiters.
-- The wake-up carries how it settled ("<pid> <JSON array of the fields>"), so a waiter needs no read.
local function settle(pid, fields, retain_ms, audit)
  local key = prompt_key(pid)
  redis.call('HSET', key, unpack(fields))
  if HASHES[pid] then
    for i = 1, #fields, 2 do
      HASHES[pid][fields[i]] = fields[i + 1]
    end
  end
  redis.call('PEXPIRE', key, retain_ms)
  redis.call('PEXPIRE', record_key(pid), retain_ms)
  -- 'escalated' is '0' from the prompt's opening until it takes a step (take_escalation.lua); a prompt
  -- opened before that field existed is looked for.
  local escalated = HASHES[pid] and HASHES[pid].escalated
  if escalated == '0' or redis.call('PEXPIRE', P .. ID.escalation .. pid, retain_ms) == 0 then
    NO_ESCALATION[pid] = true
  end
  -- A prompt opened as the thread's active one gave the thread's keys its expiry plus IDLE (open_prompt.lua),
  -- and nothing shortens them since (a write from outside the scripts gives what it creates a lifetime of
  -- its own): settling it while that is still ahead needs no read of 'keep'.
  local outlived = nil
  if active_id() == pid then
    local exp = HASHES[pid] and tonumber(HASHES[pid].exp)
    outlived = exp and exp + IDLE
    set_active(false)
  end
  if audit then
    owe('chat', {t = 'audit', pid = pid})
  end
  owe('pub', {t = 'resolved', pid = pid})
  drop_drafts(pid)
  keep_thread({'chat', 'pub'}, outlived)
  redis.call('PUBLISH', SETTLED, pid .. ' ' .. cjson.encode(fields))
end

-- A settled prompt's fields, returned to every later caller so it can say how the prompt settled.
local function settled_reply(pid)
  local reply = prompt_fields(pid)
  table.insert(reply, 1, 'settled')
  return reply
end

-- Why a prompt cannot be settled now: {'missing'} when it is gone, how it settled when it no longer waits;
-- nil while it is pending. Every settling script starts here, so the first settlement wins.
local function unsettleable(pid)
  local state = prompt_hash(pid).state
  if not state then
    return {'missing'}
  end
  if state ~= 'pending' then
    return settled_reply(pid)
  end
  return nil
end

-- Who holds a pending prompt's claim against ``by`` (an identity) and ``alt`` (its 'person:<id>', or ''):
-- the holder and until when, while the claim lasts and is neither's; nil otherwise. The one claim rule:
-- every answer (``answer``), a person's decline or cancel, and a claim or release ask it here.
local function held_by_other(pid, by, alt)
  local hash = prompt_hash(pid)
  local holder = hash.claimed_by
  if not holder or tonumber(hash.claimed_until or '0') <= NOW then
    return nil
  end
  if holder == by or (alt and alt ~= '' and holder == alt) then
    return nil
  end
  return holder, hash.claimed_until
end

-- ``held_by_other`` for a decision's opts (see decide): its 'person' names the answerer's person.
local function held_against(pid, by, opts)
  if not prompt_hash(pid).claimed_by then
    return nil
  end
  local o = (opts and opts ~= '') and cjson.decode(opts) or {}
  local alt = type(o.person) == 'string' and ('person:' .. o.person) or ''
  return held_by_other(pid, by, alt)
end

-- Keep a grant for the rest of its run, unless the run no longer runs or already keeps `most` grants:
-- 'ok', 'run_ended' or 'full'. The run's grants are one hash (g:<id> the record, u:<id> its uses); it never
-- outlives the run's own key, and ending the run deletes it.
local function keep_grant(run_id, gid, record, most)
  local run_key = P .. ID.run .. run_id
  if redis.call('HGET', run_key, 'state') ~= 'running' then
    return 'run_ended'
  end
  local key = P .. ID.grants .. run_id
  if redis.call('HLEN', key) >= 2 * most then
    return 'full'
  end
  redis.call('HSET', key, 'g:' .. gid, record, 'u:' .. gid, 0)
  local left = redis.call('PTTL', run_key)
  if left > 0 then
    redis.call('PEXPIRE', key, left)
  end
  return 'ok'
end

-- An answer's decision beyond its answers (opts: JSON {person?, asserted_by?, note?, approved_call?, vote?,
-- need?, grant?, most_grants?}), applied by the one answer path every reply and REST answer takes. With a vote (a prompt
-- needing `need` approvers): the same person twice is refused, an approval short of `need` is recorded and
-- leaves the prompt pending (its card is re-shown with the votes), a deny or the need-th counted approval
-- settles it with every vote. A grant (an approve "for this session", its record as JSON) is kept with the
-- answer, and the prompt records it ('granted') or why it was not kept ('no_grant'), so its audit item and
-- its history record say so. Returns nil once `fields` holds what to record, or the status that ends the
-- answer here.
local function decide(pid, opts, fields)
  local o = cjson.decode(opts)
  if o.vote then
    local stored = redis.call('HGET', prompt_key(pid), 'votes')
    local votes = stored and cjson.decode(stored) or {}
    local counted = 0
    for _, vote in ipairs(votes) do
      -- one vote a person: the same identity, or another identity of the same directory person
      if vote.by == o.vote.by or (type(o.vote.person) == 'string' and vote.person == o.vote.person) then
        return 'already_voted'
      end
      if vote.answer == 'Approve' and vote.counted ~= false then
        counted = counted + 1
      end
    end
    votes[#votes + 1] = o.vote
    local encoded = cjson.encode(votes)
    if o.vote.answer == 'Approve' and o.vote.counted ~= false then
      counted = counted + 1
    end
    if o.vote.answer == 'Approve' and counted < tonumber(o.need) then
      redis.call('HSET', prompt_key(pid), 'votes', encoded)
      HASHES[pid] = nil
      owe('chat', {t = 'votes', pid = pid})
      keep_thread({'chat'})
      return 'voted'
    end
    table.insert(fields, 'votes')
    table.insert(fields, encoded)
  end
  for _, name in ipairs({'person', 'asserted_by'}) do
    if type(o[name]) == 'string' then
      table.insert(fields, name)
      table.insert(fields, o[name])
    end
  end
  if type(o.note) == 'string' then
    table.insert(fields, 'note')
    table.insert(fields, o.note)
  end
  if type(o.approved_call) == 'string' then
    table.insert(fields, 'approved_call')
    table.insert(fields, o.approved_call)
  end
  if type(o.grant) == 'string' and not o.vote then
    local grant = cjson.decode(o.grant)
    local kept = keep_grant(grant.run_id, grant.grant_id, o.grant, tonumber(o.most_grants))
    table.insert(fields, kept == 'ok' and 'granted' or 'no_grant')
    table.insert(fields, kept == 'ok' and o.grant or kept)
  end
  return nil
end

-- Answer a pending prompt: hot when the agent is waiting on it (its watch key is alive); otherwise parked,
-- and the answer is re-driven to the agent as the next turn's tagged message.
-- Returns 'ok' and the resolution, or 'voted' / 'already_voted' when the decision leaves it pending, or
-- 'claimed' when another person holds the prompt's claim (nothing recorded).
-- content: a form's typed values as JSON ('' or nil for other kinds); opts: see decide ('' or nil: none).
local function answer(pid, answers, answered_by, now, retain_ms, turn_id, content, opts)
  if held_against(pid, answered_by, opts) then
    return 'claimed', nil  -- someone else holds it: the caller reads who, and until when
  end
  local fields = {'state', 'answered', 'answers', answers, 'answered_by', answered_by, 'settled_at', now}
  if opts and opts ~= '' then
    local stopped = decide(pid, opts, fields)
    if stopped then
      return stopped, nil
    end
  end
  local resolution = 'resolved_hot'
  if redis.call('EXISTS', P .. ID.watch .. pid) == 0 then
    resolution = 'resolved_parked'
    owe('pub', {t = 'parked', pid = pid, turn = turn_id})
  end
  table.insert(fields, 'resolution')
  table.insert(fields, resolution)
  if resolution == 'resolved_parked' then
    table.insert(fields, 'turn_id')
    table.insert(fields, turn_id)
  end
  if content and content ~= '' then
    table.insert(fields, 'content')
    table.insert(fields, content)
  end
  settle(pid, fields, tonumber(retain_ms), true)
  return 'ok', resolution
end

-- by: who cancelled it ('' or nil for none: the agent, the gateway, or a superseding message).
local function cancel_fields(reason, code, now, by)
  local fields = {'state', 'cancelled', 'reason', reason, 'reason_code', code, 'settled_at', now}
  if by and by ~= '' then
    table.insert(fields, 'cancelled_by')
    table.insert(fields, by)
  end
  return fields
end
