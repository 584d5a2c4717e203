"""Runs and who a thread belongs to: start, read and end a run; a thread's owners, starters, session."""

from __future__ import annotations

from dataclasses import dataclass

from gateway.base.models import ReasonCode, Run, RunState
from gateway.rules.audience import Audience
from gateway.store import calls, keys
from gateway.store.base import DAY_MS, StoreBase

RUNNING_RUN_MS = 365 * DAY_MS  # a run never ended is kept this long past the retain time


@dataclass(frozen=True, slots=True)
class RunEnd:
    """What ``end_run.lua`` did: whether the run existed, and the prompt its end cancelled ('' for none)."""

    found: bool
    cancelled: str

    @classmethod
    def decode(cls, reply: list[str]) -> RunEnd:
        return cls(reply[0] == "ok", reply[1] if len(reply) > 1 else "")


class Runs(StoreBase):
    """A thread's runs, and the audience they make it."""

    async def create_run(self, run: Run) -> None:
        """Store a running run; it and its index are kept a year past the retain time unless it ends."""
        ttl_ms = self.retain_ms + RUNNING_RUN_MS
        prelude = [("SET", keys.run_index(run.run_id), run.thread_id, "PX", ttl_ms)]
        await self.scripts.run_after(self.redis, prelude, *calls.start_run(self._lead(), run, ttl_ms))
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
        lead = self._lead(now_ms)
        call = calls.end_run(lead, thread_id, run_id, reason, now_ms, self.retain_ms, code.value)
        ended = RunEnd.decode(await self._thread_script(thread_id, call, now_ms, index))
        return ended.found, ended.cancelled
