"""A run's grants in Redis: recorded once their approval settled, counted as used, listed, revoked; they
end with the run (``end_run.lua`` deletes them, and a run no longer running lets none through)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from gateway.rules.grants import Grant
from gateway.store import calls, keys
from gateway.store.scripts import ScriptCall, Scripts, thread_lead

MAX_GRANTS_PER_RUN = 100


class GrantStatus(StrEnum):
    """What recording a grant did."""

    OK = "ok"
    RUN_ENDED = "run_ended"  # the run ended (or is gone) meanwhile
    NOT_APPROVED = "not_approved"  # its prompt is not answered Approve by the grant's maker, in its run
    FULL = "full"  # the run has MAX_GRANTS_PER_RUN grants already


class RunGrants:
    """The grants of runs, one hash per run in the run's thread slot (see ``keys.grants``)."""

    def __init__(
        self, client: Any, scripts: Scripts, thread_idle_ms: int, *, max_per_run: int = MAX_GRANTS_PER_RUN
    ) -> None:
        self.redis = client
        self.scripts = scripts
        self.thread_idle_ms = thread_idle_ms
        self.max_per_run = max_per_run

    def _lead(self) -> list[int | str]:
        return thread_lead(self.thread_idle_ms)

    async def _script(self, call: ScriptCall) -> list[Any]:
        return list(await self.scripts.call(self.redis, *call))

    async def add(self, thread_id: str, grant: Grant) -> GrantStatus:
        """Record ``grant``, only if its prompt was answered Approve by its maker and its run still runs."""
        reply = await self._script(calls.add_grant(self._lead(), thread_id, grant, self.max_per_run))
        return GrantStatus(reply[0])

    async def in_force(self, thread_id: str, run_id: str) -> list[Grant]:
        """The run's grants in force, oldest first, each with its uses so far."""
        fields: dict[str, str] = await self.redis.hgetall(keys.grants(thread_id, run_id))
        found = [
            Grant.model_validate_json(raw).model_copy(update={"uses": int(fields.get(f"u:{name[2:]}", 0))})
            for name, raw in fields.items()
            if name.startswith("g:")
        ]
        return sorted(found, key=lambda grant: grant.grant_id)

    async def use(self, thread_id: str, run_id: str, grant_id: str) -> int | None:
        """Count one use of a grant; its uses so far, or None when it was revoked or its run ended."""
        reply = await self._script(calls.use_grant(self._lead(), thread_id, run_id, grant_id))
        return int(reply[1]) if reply[0] == "ok" else None

    async def revoke(self, thread_id: str, run_id: str, grant_id: str) -> Grant | None:
        """Delete a grant; what it was (with its uses), or None when the run has no such grant."""
        reply = await self._script(calls.revoke_grant(self._lead(), thread_id, run_id, grant_id))
        if reply[0] != "ok":
            return None
        return Grant.model_validate_json(reply[1]).model_copy(update={"uses": int(reply[2])})
