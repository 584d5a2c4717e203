"""The facts a room's readers follow from, read in one round trip on every store (a cluster too), and the
rule applied to them."""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime

from gateway.base.ids import new_id
from gateway.base.models import Run
from gateway.rules.audience import Audience, Reader, may_read
from gateway.store import Store


def run_in(thread_id: str, agent: str, started_by: str | None) -> Run:
    return Run(
        run_id=new_id("run"),
        thread_id=thread_id,
        agent=agent,
        started_by=started_by,
        created_at=datetime.now(UTC),
    )


async def test_a_rooms_audience_gathers_its_runs_agents_and_starters_and_its_session(store: Store) -> None:
    fresh = await store.thread_audience("web:fresh")
    await store.log_item("web:talked", {"role": "person", "text": "hi"})
    talked = await store.thread_audience("web:talked")
    await store.create_run(run_in("web:ops", "ops", "web:alice"))
    await store.create_run(run_in("web:ops", "deploy", None))
    await store.create_run(run_in("web:ops", "ops", "web:bob"))
    ops = await store.thread_audience("web:ops")
    await store.mark_session_thread("web:hooks-0123456789", "claude-code:s1")
    session = await store.thread_audience("web:hooks-0123456789")
    assert fresh == Audience(frozenset(), frozenset(), None, used=False)
    assert talked.used and not talked.agents
    assert ops == Audience(frozenset({"ops", "deploy"}), frozenset({"web:alice", "web:bob"}), None, used=True)
    assert session.session == "claude-code:s1"


class Approvers:
    def __init__(self, *pairs: tuple[str, str]) -> None:
        self.pairs = set(pairs)

    async def is_approver(self, agent: str, identity: str, groups: Collection[str] = ()) -> bool:
        names = (identity, *(f"group:{group}" for group in groups))
        return any((agent, name) in self.pairs for name in names)


async def test_operator_tokens_read_the_rooms_of_the_agents_they_answer_for() -> None:
    approvers = Approvers()
    ops_room = Audience(frozenset({"ops"}), frozenset({"web:alice"}), None, used=True)
    nobodys = Audience(frozenset(), frozenset(), None, used=True)
    session_without_run = Audience(frozenset(), frozenset(), "claude-code:s1", used=True)
    every = Reader(operator=True)
    deploy_only = Reader(operator=True, agents=frozenset({"deploy"}))
    assert await may_read(approvers, ops_room, every)
    assert not await may_read(approvers, ops_room, deploy_only)
    assert await may_read(approvers, nobodys, deploy_only)
    assert not await may_read(approvers, session_without_run, deploy_only)
    assert await may_read(approvers, session_without_run, every)


async def test_a_signed_in_person_reads_as_their_person_identities_and_groups() -> None:
    """A session reads a room when its person, one of their linked identities, or one of the groups their
    session vouches for may: the approvers naming ``group:sre`` let a member of the IdP's sre group in."""
    approvers = Approvers(("ops", "group:sre"))
    room = Audience(frozenset({"ops"}), frozenset({"slack:U0ALICE"}), None, used=True)
    assert await may_read(approvers, room, Reader("person:carol", groups=("sre",)))
    assert not await may_read(approvers, room, Reader("person:carol", groups=("dev",)))
    assert await may_read(approvers, room, Reader("person:alice", identities=("slack:U0ALICE",)))
    assert not await may_read(approvers, room, Reader("person:alice"))
