"""Figure 2: Redis round trips per operation, counted on the wire by ``CountingConnection``.

Each operation runs several times on fresh threads; the figure is the last run (caches warm, the hot
path). Round trips are split by who makes them: the call itself, and the outbox drain it sets off.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from bench.counting import TALLY
from bench.workload import (
    AGENT,
    APPROVER,
    STARTER,
    new_thread,
    open_prompts,
    running_gateway,
    typical_request,
)
from gateway.base.models import AgentDefinition, HumanInput, InboundMessage, RunRequest
from gateway.decision.service import Gateway

REPEATS = 3


@dataclass(frozen=True, slots=True)
class RoundTrips:
    operation: str
    call: int
    outbox: int
    commands: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {"call": self.call, "outbox": self.outbox, "commands": self.commands}


async def _count(gateway: Gateway, name: str, operation: Callable[[], Awaitable[Any]]) -> RoundTrips:
    """Run ``operation`` (its setup already done), then its outbox drain; count both."""
    await gateway.outbox.idle()
    TALLY.reset()
    await operation()
    await gateway.outbox.idle()
    return RoundTrips(
        name,
        TALLY.round_trips["call"],
        TALLY.round_trips["outbox"],
        list(TALLY.commands.get("call", [])),
    )


async def _raise(gateway: Gateway) -> RoundTrips:
    thread = new_thread("CRAISE")
    run = await gateway.create_run(RunRequest(thread_id=thread, agent=AGENT, started_by=STARTER))
    request = typical_request()
    return await _count(gateway, "raise", lambda: gateway.raise_prompt(run.run_id, request))


async def _reply(gateway: Gateway, name: str, sender: str) -> RoundTrips:
    [(thread, _)] = await open_prompts(gateway, 1, "CREPLY")
    message = InboundMessage(thread_id=thread, sender=sender, text="1", event_id=new_thread("E"))
    return await _count(gateway, name, lambda: gateway.receive(message))


async def _queue(gateway: Gateway) -> RoundTrips:
    message = InboundMessage(thread_id=new_thread("CQUEUE"), sender=STARTER, text="next, please")
    return await _count(gateway, "queue", lambda: gateway.receive(message))


async def _dedupe(gateway: Gateway) -> RoundTrips:
    message = InboundMessage(
        thread_id=new_thread("CDUP"), sender=STARTER, text="again", event_id=new_thread("DUP")
    )
    await gateway.receive(message)
    return await _count(gateway, "dedupe", lambda: gateway.receive(message))


async def round_trip_figures(url: str) -> list[RoundTrips]:
    """Raise, resolve (by the run's starter, and by an approver), queue and dedupe, each counted."""
    figures: dict[str, RoundTrips] = {}
    async with running_gateway(url, counted=True) as gateway:
        await gateway.store.put_agent(
            AgentDefinition(name=AGENT, human_input=HumanInput(approvers=[APPROVER]))
        )
        for _ in range(REPEATS):
            for measured in (
                await _raise(gateway),
                await _reply(gateway, "resolve", STARTER),
                await _reply(gateway, "resolve by an approver", APPROVER),
                await _queue(gateway),
                await _dedupe(gateway),
            ):
                figures[measured.operation] = measured
    return list(figures.values())
