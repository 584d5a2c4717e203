"""Agents and approvers: an agent's definition (its human-input settings, approval policy, approvers and
claimed channels), and the rate-limit windows callers are counted in."""

from __future__ import annotations

import json
import time
from collections.abc import Collection
from datetime import UTC, datetime

from gateway.base.models import (
    GROUP_PREFIX,
    STORED,
    AgentDefinition,
    ApprovalPolicy,
    HumanInput,
)
from gateway.store import calls, keys
from gateway.store.base import StoreBase

AGENT_CACHE_S = 2.0  # how long a process reuses an agent's default expiry before reading it again


class Agents(StoreBase):
    """Agents' definitions, and rate-limit counters."""

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

    async def is_approver(self, agent: str, identity: str, groups: Collection[str] = ()) -> bool:
        """Whether the agent's approvers name ``identity``, its person (``person:<id>``), one of its
        person's directory groups, a group whose shift is theirs now (``group:<name>:on-duty``), or one
        of ``groups`` (``group:<name>``: a signed-in person's groups claim, which only a session passes)."""
        if await self.redis.sismember(keys.approvers(agent), identity):
            return True
        names = [f"{GROUP_PREFIX}{group}" for group in groups]
        who = await self.people.whois(identity)
        if who is not None:
            names += await self.people.memberships(who, datetime.now(UTC))
        return bool(names) and any(await self.redis.smismember(keys.approvers(agent), names))

    async def count_hit(self, name: str, window_ms: int) -> tuple[int, int]:
        """Count one hit in the fixed window ``name`` (started by its first hit, ``window_ms`` long):
        the hits so far and the milliseconds the window has left."""
        count, left_ms = await self.scripts.call(self.redis, *calls.count_hit(name, window_ms))
        return int(count), int(left_ms)
