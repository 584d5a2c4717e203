"""The run an agent session's questions share, one per session key and thread, so that a grant a person
makes on one of them ("approve for this session") answers the session's later identical calls."""

from __future__ import annotations

from typing import Any

from gateway.store import calls, keys
from gateway.store.scripts import Scripts, thread_lead


class SessionRuns:
    """Session key → its run in a thread, kept as long as the thread's other keys after its last use."""

    def __init__(self, client: Any, scripts: Scripts, thread_idle_ms: int) -> None:
        self.redis = client
        self.scripts = scripts
        self.thread_idle_ms = thread_idle_ms

    async def get(self, thread_id: str, session_key: str) -> str | None:
        """The id of the session's run in the thread (running or not), its lifetime renewed; None if none."""
        key = keys.session_run(thread_id, session_key)
        run_id: str | None = await self.redis.getex(key, px=self.thread_idle_ms)
        return run_id

    async def adopt(self, thread_id: str, session_key: str, run_id: str, stale: str | None) -> str:
        """Make ``run_id`` the session's run unless another running one already is (``stale`` aside);
        the session's run id either way."""
        lead = thread_lead(self.thread_idle_ms)
        call = calls.adopt_session_run(lead, thread_id, session_key, run_id, stale or "")
        return str(await self.scripts.call(self.redis, *call))
