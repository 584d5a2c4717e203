"""The Redis store: every state change is one Lua script on one thread's keys."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

from redis.asyncio.cluster import RedisCluster

from gateway.audience import Audience
from gateway.cursors import exclusive_start, page_cursor
from gateway.models import (
    STORED,
    AgentDefinition,
    Answer,
    ApprovalPolicy,
    HumanInput,
    Prompt,
    ReasonCode,
    Resolution,
    Run,
    RunState,
    to_ms,
)
from gateway.store import keys
from gateway.store.codec import RecordCodec
from gateway.store.escalations import EscalationStore, schedule, unscheduled
from gateway.store.grants import RunGrants
from gateway.store.lru import LATEST_KEPT, LRU, RUNS_KEPT, THREADS_OF_KEPT
from gateway.store.owners import Ownership
from gateway.store.publishing import plan
from gateway.store.results import (
    Decision,
    DecisionStatus,
    FeedEntry,
    HeldOutbox,
    Kept,
    OpenStatus,
    OutboxBatch,
    OutboxClaim,
    OutboxPass,
    ReadyAnswer,
    Refusal,
    Settlement,
    SettlementStatus,
)
from gateway.store.scripts import Scripts, thread_lead
from gateway.store.session_runs import SessionRuns

DAY_MS = 24 * 3600 * 1000
RETAIN_MS = 30 * DAY_MS  # a settled prompt, an ended run
THREAD_IDLE_MS = 30 * DAY_MS  # a thread's log, owners and outbox after its last write
FEED_MAXLEN = 100_000  # entries kept per feed (events, messages), about, a twelfth per partition
FEED_MAX_AGE_MS = 7 * DAY_MS  # and none older than this
FEED_DEDUPE_S = 3600  # how long an appended entry's id is remembered, so a second drain adds nothing
HISTORY_MAXLEN = 250_000  # records kept in the history, about, a twelfth per partition
HISTORY_MAX_AGE_MS = 90 * DAY_MS  # and none older than this (THREADGATE_HISTORY_DAYS)
RUNNING_RUN_MS = 365 * DAY_MS  # a run never ended is kept this long past the retain time
AGENT_CACHE_S = 2.0  # how long a process reuses an agent's default expiry before reading it again


def _pairs(flat: list[Any]) -> dict[str, str]:
    return {str(flat[i]): str(flat[i + 1]) for i in range(0, len(flat), 2)}


def _outbox_batch(reply: list[Any]) -> OutboxBatch | None:
    if reply[0] == "busy":
        return None
    if reply[0] in ("released", "renewed"):
        return OutboxBatch([], [], {})
    _, pub, chat, prompts = reply
    return OutboxBatch(
        [json.loads(raw) for raw in pub],
        [json.loads(raw) for raw in chat],
        {str(prompts[i]): _pairs(prompts[i + 1]) for i in range(0, len(prompts), 2)},
    )


def _held(claim: OutboxClaim | None, rest: list[Any]) -> HeldOutbox | None:
    """The outbox a settling script took under ``claim``: its reply's trailing batch, when it has one."""
    if claim is None or not rest:
        return None
    batch = _outbox_batch(rest[0])
    return HeldOutbox(claim.token, batch) if batch is not None else None


def _forget(pipe: Any, prompt_id: str, agent: str, parts: list[int]) -> None:
    """Queue on ``pipe`` what drops a settled prompt from the inbox and expiry indexes of ``parts``."""
    for part in parts:
        pipe.zrem(keys.pending_index(part), prompt_id)
        pipe.zrem(keys.agent_pending(agent, part), prompt_id)
        pipe.zrem(keys.expiry_index(part), prompt_id)


def _ranked(replies: list[list[Any]], *, newest_first: bool) -> list[tuple[int, str]]:
    """Partitions' ``(member, score)`` replies as one list of (score, member), by score then member, each
    member once (one moved from the legacy index may briefly be in both)."""
    rows = {str(member): int(float(score)) for reply in replies for member, score in reply}
    return sorted(((score, member) for member, score in rows.items()), reverse=newest_first)


def _oldest(replies: list[list[Any]], limit: int) -> list[str]:
    """The ``limit`` members with the lowest scores across the partitions' replies."""
    return [member for _, member in _ranked(replies, newest_first=False)[:limit]]


def _unindexed(settled: list[Prompt]) -> list[tuple[Any, ...]]:
    """The ZREMs that drop settled prompts from the inbox and expiry indexes: one per index and
    partition for the whole batch."""
    by_part: dict[int, list[Prompt]] = {}
    for prompt in settled:
        by_part.setdefault(keys.partition(prompt.thread_id), []).append(prompt)
    commands: list[tuple[Any, ...]] = []
    for part, prompts in by_part.items():
        ids = [prompt.prompt_id for prompt in prompts]
        commands += [("ZREM", keys.pending_index(part), *ids), ("ZREM", keys.expiry_index(part), *ids)]
        by_agent: dict[str, list[str]] = {}
        for prompt in prompts:
            by_agent.setdefault(prompt.agent, []).append(prompt.prompt_id)
        commands += [("ZREM", keys.agent_pending(name, part), *group) for name, group in by_agent.items()]
    return commands


def _share(maxlen: int) -> int:
    """A partition's share of a feed's length cap (rounded up: the feed keeps at least ``maxlen``)."""
    return -(-maxlen // keys.PARTITIONS)


def _content_json(content: dict[str, Any] | None) -> str:
    return "" if content is None else json.dumps(content, ensure_ascii=False)


class Store:
    """Prompts, runs, agents, outboxes and feeds in Redis."""

    def __init__(
        self,
        client: Any,
        *,
        retain_ms: int = RETAIN_MS,
        dedupe_ttl_s: int = 48 * 3600,
        items_maxlen: int = 500,
        feed_maxlen: int = FEED_MAXLEN,
        feed_max_age_ms: int = FEED_MAX_AGE_MS,
        thread_idle_ms: int = THREAD_IDLE_MS,
        feed_dedupe_s: int = FEED_DEDUPE_S,
        history_maxlen: int = HISTORY_MAXLEN,
        history_max_age_ms: int = HISTORY_MAX_AGE_MS,
    ) -> None:
        self.redis = client
        self.scripts = Scripts()
        self.codec = RecordCodec()
        self.retain_ms = retain_ms
        self.dedupe_ttl_s = dedupe_ttl_s
        self.items_maxlen = items_maxlen
        self.feed_maxlen = feed_maxlen
        self.feed_max_age_ms = feed_max_age_ms
        self.thread_idle_ms = thread_idle_ms
        self.feed_dedupe_s = feed_dedupe_s
        self.history_maxlen = history_maxlen
        self.history_max_age_ms = history_max_age_ms
        self._thread_of: LRU[str] = LRU(THREADS_OF_KEPT)
        # Immutable records this process has seen: a run (its state aside) and each thread's latest
        # prompt, so a raise and a starter's reply need not read them back before their one script.
        self._runs: LRU[Run] = LRU(RUNS_KEPT)
        self._latest: LRU[Prompt] = LRU(LATEST_KEPT)
        self._settings: dict[str, tuple[float, HumanInput]] = {}
        self._legacy_dirty: set[str] = set()  # threads the last dirty read found in the legacy set
        self.owners = Ownership(client)
        self.grants = RunGrants(client, self.scripts, thread_idle_ms)
        self.session_runs = SessionRuns(client, self.scripts, thread_idle_ms)
        self.escalations = EscalationStore(self)

    async def load(self) -> None:
        await self.scripts.load(self.redis)

    async def ping(self) -> None:
        """One round trip to Redis (raises when it cannot answer)."""
        await self.redis.ping()

    def _lead(self, now_ms: int | None = None, claim: OutboxClaim | None = None) -> list[int | str]:
        """The arguments every thread script starts with (see ``thread_lead``)."""
        return thread_lead(self.thread_idle_ms, now_ms, claim.arg if claim is not None else "")

    async def _thread_script(
        self,
        name: str,
        thread_id: str,
        args: list[Any],
        now_ms: int,
        prelude: list[tuple[Any, ...]] | None = None,
        claim: OutboxClaim | None = None,
    ) -> list[Any]:
        """Run a thread script after marking the thread dirty for the outbox (and any other ``prelude``
        commands), in one round trip."""
        commands = [
            ("ZADD", keys.dirty_threads(keys.partition(thread_id)), now_ms, thread_id),
            *(prelude or []),
        ]
        prefix = [keys.thread_prefix(thread_id)]
        lead = self._lead(now_ms, claim)
        reply = await self.scripts.run_after(self.redis, commands, name, prefix, [*lead, *args])
        return list(reply)

    # Runs -------------------------------------------------------------------------------------------

    async def create_run(self, run: Run) -> None:
        """Store a running run; it and its index are kept a year past the retain time unless it ends."""
        ttl_ms = self.retain_ms + RUNNING_RUN_MS
        prelude = [("SET", keys.run_index(run.run_id), run.thread_id, "PX", ttl_ms)]
        args = [*self._lead(), run.run_id, run.model_dump_json(), ttl_ms, run.agent, run.started_by or ""]
        prefix = [keys.thread_prefix(run.thread_id)]
        await self.scripts.run_after(self.redis, prelude, "start_run", prefix, args)
        self.owners.remember_run(run.thread_id, run.agent)
        self._thread_of.put(run.run_id, run.thread_id)
        self._runs.put(run.run_id, run)

    async def thread_audience(self, thread_id: str) -> Audience:
        """Who a thread belongs to (its runs' agents and starters, a session's key) and whether anything
        was ever logged or run in it: one round trip."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.smembers(keys.thread_agents(thread_id))
        pipe.smembers(keys.thread_starters(thread_id))
        pipe.get(keys.thread_session(thread_id))
        pipe.exists(keys.items(thread_id))
        agents, starters, session, logged = await pipe.execute()
        return Audience(frozenset(agents), frozenset(starters), session, bool(logged) or bool(agents))

    async def mark_session_thread(self, thread_id: str, session_key: str) -> None:
        pipe = self.redis.pipeline(transaction=False)
        pipe.set(keys.thread_session(thread_id), session_key, px=self.thread_idle_ms)
        pipe.delete(keys.thread_kept(thread_id))  # the next script gives it the thread's own lifetime
        await pipe.execute()

    async def run_thread(self, run_id: str) -> str | None:
        return await self._indexed_thread(run_id, keys.run_index(run_id))

    async def _indexed_thread(self, object_id: str, index_key: str) -> str | None:
        """The thread of a run or prompt: remembered here, else read from its index key."""
        thread = self._thread_of.get(object_id)
        if thread is None:
            thread = await self.redis.get(index_key)
            if thread is not None:
                self._thread_of.put(object_id, thread)
        return thread

    async def get_run(self, run_id: str, *, state_may_be_stale: bool = False) -> Run | None:
        """The run; with ``state_may_be_stale`` a record this process already has (for a caller whose
        script checks the state itself)."""
        if state_may_be_stale and (known := self._runs.get(run_id)) is not None:
            return known
        thread = await self.run_thread(run_id)
        if thread is None:
            return None
        fields = await self.redis.hgetall(keys.run(thread, run_id))
        if not fields:
            return None
        run = Run.model_validate_json(fields["rec"])
        self._runs.put(run_id, run)
        return run.model_copy(update={"state": RunState(fields["state"])})

    async def end_run(
        self, thread_id: str, run_id: str, reason: str, now_ms: int, code: ReasonCode = ReasonCode.RUN_ENDED
    ) -> tuple[bool, str]:
        """End a run (``code`` says why its prompt is cancelled); returns (found, id of that prompt or '').

        The ended run and its index are kept the retain time from now."""
        index = [("PEXPIRE", keys.run_index(run_id), self.retain_ms)]
        args = [run_id, reason, now_ms, self.retain_ms, code.value]
        reply = await self._thread_script("end_run", thread_id, args, now_ms, index)
        return reply[0] == "ok", (reply[1] if len(reply) > 1 else "")

    # Prompts ----------------------------------------------------------------------------------------

    async def open_prompt(self, prompt: Prompt, supersede_reason: str, now_ms: int) -> tuple[OpenStatus, str]:
        """Open ``prompt`` as its thread's active prompt. Returns (status, superseded prompt id or '').

        The indexes are written first, in the same round
        trip, so the prompt can be found by id the moment it exists.
        """
        thread = prompt.thread_id
        expires_ms = to_ms(prompt.expires_at)
        index_ttl_ms = max(expires_ms - now_ms, 0) + self.retain_ms
        created = to_ms(prompt.created_at)
        part = keys.partition(thread)
        prelude: list[tuple[Any, ...]] = [
            ("SET", keys.prompt_index(prompt.prompt_id), thread, "PX", index_ttl_ms),
            ("ZADD", keys.expiry_index(part), expires_ms, prompt.prompt_id),
            ("ZADD", keys.pending_index(part), created, prompt.prompt_id),
            ("ZADD", keys.agent_pending(prompt.agent, part), created, prompt.prompt_id),
            ("ZADD", keys.dirty_threads(part), now_ms, thread),
            *schedule(prompt),
        ]
        record = self.codec.encode(prompt)
        args = [
            *self._lead(now_ms),
            prompt.prompt_id,
            prompt.run_id,
            record,
            now_ms,
            expires_ms,
            self.retain_ms,
            supersede_reason,
            prompt.agent,
        ]
        reply = await self.scripts.run_after(
            self.redis, prelude, "open_prompt", [keys.thread_prefix(thread)], args
        )
        self._thread_of.put(prompt.prompt_id, thread)
        status = OpenStatus(reply[0])
        if status is OpenStatus.OK:
            self._latest.put(thread, prompt)
        return status, (reply[1] if len(reply) > 1 else "")

    async def prompt_thread(self, prompt_id: str) -> str | None:
        return await self._indexed_thread(prompt_id, keys.prompt_index(prompt_id))

    async def get_prompt(
        self, prompt_id: str, thread_id: str | None = None, *, watch_ms: int = 0
    ) -> Prompt | None:
        """The prompt; with ``watch_ms``, a pending one is also marked as waited on for that long (see
        ``watch``), in the same step."""
        thread = thread_id or await self.prompt_thread(prompt_id)
        if thread is None:
            return None
        args = [*self._lead(), prompt_id, watch_ms]
        reply = await self.scripts.call(self.redis, "read_prompt", [keys.thread_prefix(thread)], args)
        fields = _pairs(reply)
        return self.codec.decode(fields) if "state" in fields and "rec" in fields else None

    def _settlement(self, reply: list[Any]) -> Settlement:
        if reply[0] == "settled":
            return Settlement(SettlementStatus.SETTLED, self.codec.decode(_pairs(reply[1:])))
        return Settlement(SettlementStatus(reply[0]))

    async def resolve(
        self,
        thread_id: str,
        prompt_id: str,
        answers: list[Answer],
        answered_by: str | None,
        turn_id: str,
        now_ms: int,
        content: dict[str, Any] | None = None,
        opts: str = "",
        claim: OutboxClaim | None = None,
    ) -> Settlement:
        """Answer a prompt; the first resolution wins. Hot if the agent is watching, else parked.

        ``opts`` carries an approval's decision (see ``gateway.verdicts``): a vote may leave it pending.
        With ``claim``, an answer also takes the thread's outbox lock when free (``Settlement.held``)."""
        payload = json.dumps([answer.model_dump(mode="json") for answer in answers], ensure_ascii=False)
        args = [
            prompt_id,
            payload,
            answered_by or "",
            now_ms,
            self.retain_ms,
            turn_id,
            _content_json(content),
            opts,
        ]
        reply = await self._thread_script("resolve_prompt", thread_id, args, now_ms, claim=claim)
        if reply[0] == "ok":
            held = _held(claim, reply[2:])
            return Settlement(SettlementStatus.OK, resolution=Resolution(reply[1]), held=held)
        if reply[0] in (SettlementStatus.VOTED, SettlementStatus.ALREADY_VOTED):
            return Settlement(SettlementStatus(reply[0]))
        return self._settlement(reply)

    async def watch(self, thread_id: str, prompt_id: str, ttl_ms: int) -> None:
        """Mark that the agent is waiting on a prompt right now (an answer then resolves hot)."""
        await self.redis.set(keys.watch(thread_id, prompt_id), "1", px=ttl_ms)

    async def is_watched(self, thread_id: str, prompt_id: str) -> bool:
        """Whether the agent is waiting on the prompt right now (an answer would resolve hot)."""
        return bool(await self.redis.exists(keys.watch(thread_id, prompt_id)))

    async def admit(self, thread_id: str, token: str, ttl_ms: int) -> bool:
        """Take the thread's answer admission for ``token`` (at most ``ttl_ms``); False while another
        caller holds it."""
        return bool(await self.redis.set(keys.admission(thread_id), token, nx=True, px=ttl_ms))

    async def release_admission(self, thread_id: str, token: str) -> None:
        """Give the admission back, if ``token`` still holds it."""
        await self.scripts.call(self.redis, "release_held", [keys.admission(thread_id)], [token])

    async def cancel(
        self,
        thread_id: str,
        prompt_id: str,
        reason: str,
        code: ReasonCode,
        now_ms: int,
        *,
        audit: bool = True,
        by: str = "",
    ) -> Settlement:
        """Cancel a pending prompt; ``by`` names the person who did (kept as ``cancelled_by``)."""
        args = [prompt_id, reason, code.value, now_ms, self.retain_ms, "1" if audit else "0", by]
        return self._settlement(await self._thread_script("cancel_prompt", thread_id, args, now_ms))

    async def expire(self, thread_id: str, prompt_id: str, reason: str, now_ms: int) -> Settlement:
        args = [prompt_id, reason, now_ms, self.retain_ms]
        return self._settlement(await self._thread_script("expire_prompt", thread_id, args, now_ms))

    async def record_post(
        self, thread_id: str, prompt_id: str, message_id: str, entry: dict[str, Any]
    ) -> None:
        """Remember where a prompt was posted (to retire its controls later) and log the item."""
        await self._append_item(thread_id, entry, [prompt_id, message_id])

    async def note_copy_reply(
        self, thread_id: str, event_id: str | None, entry: dict[str, Any] | None
    ) -> None:
        """A message handed to another thread (a reply to a copy of its prompt): its platform event is
        marked seen here as well, so a redelivery after the copy is gone is still a duplicate; ``entry``,
        when given, is logged here too."""
        prelude: list[tuple[Any, ...]] = []
        if event_id:
            prelude.append(("SET", keys.seen(thread_id, event_id), "1", "EX", self.dedupe_ttl_s))
        if entry is None:
            if prelude:
                await self.scripts.run_commands(self.redis, prelude)
            return
        args = [*self._lead(), self.items_maxlen, json.dumps(entry, ensure_ascii=False)]
        prefix = [keys.thread_prefix(thread_id)]
        await self.scripts.run_after(self.redis, prelude, "append_item", prefix, args)

    async def _append_item(self, thread_id: str, entry: dict[str, Any], posted: list[str]) -> str:
        args = [*self._lead(), self.items_maxlen, json.dumps(entry, ensure_ascii=False), *posted]
        entry_id = await self.scripts.call(self.redis, "append_item", [keys.thread_prefix(thread_id)], args)
        return str(entry_id)

    async def get_prompt_field(self, thread_id: str, prompt_id: str, name: str) -> str | None:
        value: str | None = await self.redis.hget(keys.prompt(thread_id, prompt_id), name)
        return value

    async def update_draft(
        self, thread_id: str, prompt_id: str, name: str, values: dict[str, str], ttl_ms: int
    ) -> dict[str, str] | None:
        """Merge ``values`` into the draft ``name`` kept for a pending prompt, ``ttl_ms`` more; the whole
        draft, or None when the prompt is no longer pending. The prompt settling deletes its drafts."""
        pairs = [part for field_value in values.items() for part in field_value]
        args = [*self._lead(), prompt_id, name, ttl_ms, *pairs]
        reply = await self.scripts.call(self.redis, "save_draft", [keys.thread_prefix(thread_id)], args)
        return _pairs(reply[1]) if reply[0] == "saved" else None

    async def get_draft(self, thread_id: str, name: str) -> dict[str, str]:
        return dict(await self.redis.hgetall(keys.draft(thread_id, name)))

    async def _each_partition(self, read: Any) -> list[Any]:
        """``read(pipe, part)`` queued for every partition (the legacy keys too) in one pipelined round
        trip (on a cluster, one per node); the replies in partition order."""
        pipe = self.redis.pipeline(transaction=False)
        for part in keys.EVERY_PARTITION:
            read(pipe, part)
        return list(await pipe.execute())

    async def due_prompts(self, now_ms: int, limit: int = 200) -> list[str]:
        """Up to ``limit`` pending prompts whose expiry has passed, the longest overdue first."""
        replies = await self._each_partition(
            lambda pipe, part: pipe.zrangebyscore(
                keys.expiry_index(part), "-inf", now_ms, start=0, num=limit, withscores=True
            )
        )
        return _oldest(replies, limit)

    async def forget_pending(self, prompt_id: str, agent: str, thread_id: str | None = None) -> None:
        """Drop a settled prompt from the inbox and expiry indexes (its partition's, and the legacy ones);
        its thread is read from its index unless given."""
        thread = thread_id or await self.prompt_thread(prompt_id)
        parts = [keys.partition(thread), keys.LEGACY] if thread is not None else list(keys.EVERY_PARTITION)
        pipe = self.redis.pipeline(transaction=False)
        _forget(pipe, prompt_id, agent, parts)
        await pipe.execute()

    async def active_prompt_id(self, thread_id: str) -> str | None:
        value: str | None = await self.redis.get(keys.active(thread_id))
        return value

    async def pending_ids(
        self, agent: str | None, position: tuple[int, str] | int | None, limit: int
    ) -> tuple[list[str], str | None]:
        """Pending prompt ids, newest first (by creation, then id), one page after ``position``: the
        (created ms, id) of the last prompt of the page before (see ``page_cursor``), or an earlier
        version's offset. Merged from every partition; the next page's cursor, None at the end."""

        def index(part: int) -> str:
            return keys.agent_pending(agent, part) if agent else keys.pending_index(part)

        if isinstance(position, int):  # an offset into the whole inbox: the first pages of each, merged
            replies = await self._each_partition(
                lambda pipe, part: pipe.zrevrange(index(part), 0, position + limit, withscores=True)
            )
            rows = _ranked(replies, newest_first=True)[position:]
        else:
            score, member = position if position is not None else ("", "")
            calls = [
                ("page_index", [index(part)], [score, member, limit + 1]) for part in keys.EVERY_PARTITION
            ]
            replies = [
                [(reply[i], reply[i + 1]) for i in range(0, len(reply), 2)]
                for reply in await self.scripts.call_many(self.redis, calls)
            ]
            rows = _ranked(replies, newest_first=True)
        page = rows[:limit]
        more = len(rows) > limit
        return [member for _, member in page], (page_cursor(*page[-1]) if more and page else None)

    async def pending_count(self) -> int:
        """How many entries the inbox holds (every partition's, the legacy one's too)."""
        return sum(
            int(n)
            for n in await self._each_partition(lambda pipe, part: pipe.zcard(keys.pending_index(part)))
        )

    async def pending_states(self, batch: int = 1000) -> AsyncIterator[list[tuple[str, str | None]]]:
        """The inbox's prompt ids with their stored state (None: no record), a batch at a time.

        ``ZSCAN`` walks each partition of the inbox by cursor, so entries added or removed meanwhile
        (prompts raised and settled while this runs) never make it skip one that stays; one may come
        twice. Three pipelined round trips per batch, so a million waiting prompts are read in seconds.
        """
        for part in keys.EVERY_PARTITION:
            cursor = 0
            while True:
                cursor, members = await self.redis.zscan(keys.pending_index(part), cursor, count=batch)
                ids = [str(pid) for pid, _score in members]
                if ids:
                    yield await self._states(ids)
                if not cursor:
                    break

    async def _states(self, ids: list[str]) -> list[tuple[str, str | None]]:
        pipe = self.redis.pipeline(transaction=False)
        for prompt_id in ids:
            pipe.get(keys.prompt_index(prompt_id))
        threads = await pipe.execute()
        pipe = self.redis.pipeline(transaction=False)
        for prompt_id, thread in zip(ids, threads, strict=True):
            if thread is not None:
                pipe.hget(keys.prompt(thread, prompt_id), "state")
        states = iter(await pipe.execute())
        return [
            (pid, next(states) if thread is not None else None)
            for pid, thread in zip(ids, threads, strict=True)
        ]

    # Inbound messages -------------------------------------------------------------------------------

    def latest_prompt(self, thread_id: str) -> Prompt | None:
        """The last prompt this process saw opened or active in the thread: a guess, checked by Redis."""
        return self._latest.get(thread_id)

    async def receive(
        self,
        thread_id: str,
        event_id: str | None,
        prompt_hint: str | None,
        message: dict[str, Any],
        now_ms: int,
        ready: ReadyAnswer | Refusal | Kept | None = None,
        claim: OutboxClaim | None = None,
    ) -> Decision:
        """Dedupe a person's message, then answer, queue or refuse it, or hand back the active prompt.

        The event is marked seen in the same script that applies its effect; an ``active`` decision marks
        nothing, so the caller's second call (with a decided ``ReadyAnswer`` or a ``Refusal``) does. With
        ``claim``, an answer also takes the thread's outbox lock when free (``Decision.held``).
        """
        args: list[Any] = [
            event_id or "",
            self.dedupe_ttl_s,
            prompt_hint or "",
            json.dumps(message, ensure_ascii=False),
            self.items_maxlen,
        ]
        if isinstance(ready, Refusal):
            args += ["refuse", ready.prompt_id]
        elif isinstance(ready, Kept):
            args += ["keep", ready.prompt_id]
        elif ready is not None:
            answers = json.dumps([a.model_dump(mode="json") for a in ready.answers], ensure_ascii=False)
            mode = "answer" if ready.decided else "guess"
            args += [mode, ready.prompt_id, answers, ready.answered_by, now_ms, self.retain_ms, ready.turn_id]
            code = ready.cancel_code.value if ready.cancel_code is not None else ""
            args += [_content_json(ready.content), code, ready.cancel_reason, ready.opts]
        reply = await self._thread_script("receive_message", thread_id, args, now_ms, claim=claim)
        if reply[0] in ("answered", "queued", "settled", "cancelled"):  # no prompt of the thread is open
            self._latest.pop(thread_id, None)
        if reply[0] == "answered":
            held = _held(claim, reply[2:])
            return Decision(DecisionStatus.ANSWERED, resolution=Resolution(reply[1]), held=held)
        if reply[0] == "active":
            prompt = self.codec.pending(reply[2])
            self._latest.put(thread_id, prompt)
            return Decision(DecisionStatus.ACTIVE, prompt)
        if reply[0] == "settled":
            return Decision(DecisionStatus.SETTLED, self.codec.decode(_pairs(reply[1:])))
        if reply[0] == "mirror":
            return Decision(DecisionStatus.MIRROR, mirror=(str(reply[1]), str(reply[2])))
        return Decision(DecisionStatus(reply[0]))

    # Agents and approvers ---------------------------------------------------------------------------

    async def human_input(self, agent: str) -> HumanInput:
        """An agent's human-input settings (approvers aside), read at most every ``AGENT_CACHE_S`` per
        process: a raise reads its default expiry and reply policy from them."""
        now = time.monotonic()
        cached = self._settings.get(agent)
        if cached is not None and cached[0] > now:
            return cached[1]
        raw = await self.redis.get(keys.agent(agent))
        settings = HumanInput.model_validate_json(raw, context=STORED) if raw else HumanInput()
        self._settings[agent] = (now + AGENT_CACHE_S, settings)
        return settings

    async def approval_policy(self, agent: str) -> ApprovalPolicy:
        raw = await self.redis.get(keys.agent_approval(agent))
        return ApprovalPolicy.model_validate_json(raw) if raw else ApprovalPolicy()

    async def put_agent(self, definition: AgentDefinition) -> None:
        pipe = self.redis.pipeline(transaction=True)
        pipe.set(keys.agent(definition.name), definition.human_input.model_dump_json(exclude={"approvers"}))
        pipe.set(keys.agent_approval(definition.name), definition.approval.model_dump_json())
        pipe.delete(keys.approvers(definition.name))
        if definition.human_input.approvers:
            pipe.sadd(keys.approvers(definition.name), *definition.human_input.approvers)
        await pipe.execute()
        if definition.channels is not None:
            await self.owners.set_claims(definition.name, definition.channels)
        self._settings.pop(definition.name, None)

    async def get_agent(self, name: str) -> AgentDefinition | None:
        pipe = self.redis.pipeline(transaction=False)
        pipe.get(keys.agent(name))
        pipe.smembers(keys.approvers(name))
        pipe.get(keys.agent_approval(name))
        pipe.hget(keys.CLAIMS, name)
        raw, approvers, approval, claimed = await pipe.execute()
        if raw is None and not approvers and approval is None and not claimed:
            return None
        settings = json.loads(raw) if raw else {}
        human = HumanInput.model_validate({**settings, "approvers": sorted(approvers)}, context=STORED)
        policy = ApprovalPolicy.model_validate_json(approval) if approval else ApprovalPolicy()
        channels = json.loads(claimed) if claimed else []
        return AgentDefinition.model_validate(
            {"name": name, "human_input": human, "approval": policy, "channels": channels}, context=STORED
        )

    async def is_approver(self, agent: str, identity: str) -> bool:
        return bool(await self.redis.sismember(keys.approvers(agent), identity))

    # Outbox -----------------------------------------------------------------------------------------

    async def dirty_threads(self, cutoff_ms: int, limit: int = 100) -> list[str]:
        """Up to ``limit`` threads marked dirty at or before ``cutoff_ms``, the longest waiting first."""
        replies = await self._each_partition(
            lambda pipe, part: pipe.zrangebyscore(
                keys.dirty_threads(part), "-inf", cutoff_ms, start=0, num=limit, withscores=True
            )
        )
        self._legacy_dirty = {str(member) for member, _ in replies[keys.LEGACY]}
        return _oldest(replies, limit)

    async def queue_depths(self, sample: int) -> tuple[int, int, int]:
        """Threads with outbox work, the posts and events the first ``sample`` of them still owe, and
        webhook deliveries waiting: what a metrics scrape reports."""

        def read(pipe: Any, part: int) -> None:
            pipe.zrange(keys.dirty_threads(part), 0, sample - 1, withscores=True)
            pipe.zcard(keys.dirty_threads(part))

        replies = await self._each_partition(read)  # each partition's first members, then its size
        dirty = _oldest(replies[0::2], sample)
        threads = sum(int(n) for n in replies[1::2])
        depth = 0
        if dirty:
            pipe = self.redis.pipeline(transaction=False)
            for thread_id in dirty:
                pipe.llen(keys.chat_outbox(thread_id))
                pipe.llen(keys.pub_outbox(thread_id))
            depth = sum(int(n) for n in await pipe.execute())
        return threads, depth, int(await self.redis.zcard(keys.WEBHOOK_DUE))

    async def drop_dirty(self, thread_id: str, cutoff_ms: int) -> None:
        """Forget a drained thread in the dirty sets, unless it was marked again after ``cutoff_ms``."""
        parts = [keys.partition(thread_id)]
        if thread_id in self._legacy_dirty:  # the last read found it in an earlier version's set too
            parts.append(keys.LEGACY)
        calls = [("drop_dirty", [keys.dirty_threads(part)], [thread_id, cutoff_ms]) for part in parts]
        await self.scripts.call_many(self.redis, calls)

    async def take_outboxes(self, passes: list[OutboxPass]) -> list[OutboxBatch | None]:
        """One round trip for many threads' passes: each acknowledges its last pass, then takes its next
        batch or releases its lock (see ``OutboxPass``). ``None`` where another process holds the lock
        (or ours lapsed); an empty batch where the lock was released."""
        calls = [
            (
                "take_outbox",
                [keys.thread_prefix(one.thread_id)],
                [
                    *self._lead(),
                    one.token,
                    one.ttl_ms,
                    one.mode,
                    one.pub_done,
                    one.chat_done,
                    one.size,
                    self.items_maxlen,
                    *one.logged,
                ],
            )
            for one in passes
        ]
        return [_outbox_batch(reply) for reply in await self.scripts.call_many(self.redis, calls)]

    async def publish(
        self, entries: list[FeedEntry], settled: list[Prompt], now_ms: int | None = None
    ) -> None:
        """Append feed entries, each once by its id (see ``publish_feed.lua``), and drop settled prompts
        from the inbox and expiry indexes (their id index then lives the retain time): one round trip."""
        now_ms = now_ms if now_ms is not None else int(time.time() * 1000)
        drops = [*_unindexed(settled), *unscheduled(settled)]
        cluster = isinstance(self.redis, RedisCluster)
        calls = [
            group.call(lambda stream: self._caps(stream, now_ms), self.feed_dedupe_s)
            for group in plan(entries, drops, by_slot=cluster)
        ]
        # The index lives as long as the settled prompt it points to (set at open: past its expiry).
        indexes = [("PEXPIRE", keys.prompt_index(p.prompt_id), self.retain_ms) for p in settled]
        if cluster:  # the partitions and indexes live on several nodes
            await self.scripts.call_many(self.redis, calls)
            if indexes:
                pipe = self.redis.pipeline(transaction=False)
                for command in indexes:
                    pipe.execute_command(*command)
                await pipe.execute()
            return
        await self.scripts.run_commands(self.redis, [*(self.scripts.command(*c) for c in calls), *indexes])

    def _caps(self, stream: str, now_ms: int) -> tuple[int, str]:
        """A feed partition's bounds at ``now_ms``: about how many entries it keeps (its share of the
        feed's), and the oldest stream id it keeps (entries before it are past the retention). The history
        has its own."""
        if keys.is_history(stream):
            return _share(self.history_maxlen), f"{max(now_ms - self.history_max_age_ms, 0)}-0"
        return _share(self.feed_maxlen), f"{max(now_ms - self.feed_max_age_ms, 0)}-0"

    async def trim_feeds(self, now_ms: int) -> None:
        """Drop feed entries past the retention while no new entry comes to trim them (the sweeper)."""
        pipe = self.redis.pipeline(transaction=False)
        for part in keys.EVERY_PARTITION:
            for stream in (keys.events_feed(part), keys.messages_feed(part), keys.history_feed(part)):
                pipe.xtrim(stream, minid=self._caps(stream, now_ms)[1], approximate=False)
        await pipe.execute()

    async def history_rows(
        self, part: int, low: str, high: str, count: int, *, newest_first: bool
    ) -> list[tuple[str, str]]:
        """Up to ``count`` records of history partition ``part`` (``keys.history_feed``) with stream ids
        between ``low`` and ``high`` (XRANGE bounds: ``-``, ``+``, ``<ms>``, ``(<id>``), newest or oldest
        first: (stream id, record JSON) pairs."""
        stream = keys.history_feed(part)
        if newest_first:
            rows = await self.redis.xrevrange(stream, max=high, min=low, count=count)
        else:
            rows = await self.redis.xrange(stream, min=low, max=high, count=count)
        return [(str(entry_id), str(fields.get("j", ""))) for entry_id, fields in rows]

    async def push_chat(self, thread_id: str, effect: dict[str, Any], now_ms: int) -> None:
        """Queue a chat post for a thread (an agent message), marking the thread dirty first."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.zadd(keys.dirty_threads(keys.partition(thread_id)), {thread_id: now_ms})
        pipe.rpush(keys.chat_outbox(thread_id), json.dumps(effect, ensure_ascii=False))
        pipe.delete(keys.thread_kept(thread_id))  # the drain's script gives the list the thread's lifetime
        await pipe.execute()

    # Rate limits ------------------------------------------------------------------------------------

    async def count_hit(self, name: str, window_ms: int) -> tuple[int, int]:
        """Count one hit in the fixed window ``name`` (started by its first hit, ``window_ms`` long):
        the hits so far and the milliseconds the window has left."""
        count, left_ms = await self.scripts.call(
            self.redis, "count_hit", [keys.rate_window(name)], [window_ms]
        )
        return int(count), int(left_ms)

    # Logs and feeds ---------------------------------------------------------------------------------

    async def log_item(self, thread_id: str, entry: dict[str, Any]) -> str:
        return await self._append_item(thread_id, entry, [])

    async def thread_items(
        self, thread_id: str, after: str | None, limit: int
    ) -> list[tuple[str, dict[str, Any]]]:
        start = exclusive_start(after)
        if start is None:
            return []
        rows = await self.redis.xrange(keys.items(thread_id), min=start, max="+", count=limit)
        return [(entry_id, json.loads(fields["j"])) for entry_id, fields in rows]
