"""The directory's scripts on every store (embedded, Redis, Cluster): one identity, one person, atomically;
link codes single use."""

from __future__ import annotations

import asyncio

from gateway.base.models import AgentDefinition, HumanInput, Person
from gateway.rules.authz import may_decide
from gateway.store import Store
from gateway.store.people import LinkStatus

SLACK, TEAMS, OTHER = "slack:U0DANA", "teams:8f2c1d4e-1111-2222-3333-444455556666", "slack:U0OTHER"


async def test_an_identity_belongs_to_one_person_even_when_claims_race(store: Store) -> None:
    people = store.people
    results = await asyncio.gather(
        *(people.put(Person(person=f"p{i}", identities=[SLACK])) for i in range(6))
    )
    winners = [i for i, (_, taken) in enumerate(results) if taken is None]
    assert len(winners) == 1
    assert (await people.whois(SLACK)) == await people.get(f"p{winners[0]}")


async def test_link_and_unlink_keep_the_index_and_the_person_in_step(store: Store) -> None:
    people = store.people
    await people.put(Person(person="dana", identities=[SLACK]))
    await people.put(Person(person="erin"))
    assert await people.link("erin", SLACK) == (LinkStatus.TAKEN, "dana")
    assert (await people.link("dana", TEAMS))[0] is LinkStatus.OK
    assert (await people.link("ghost", OTHER))[0] is LinkStatus.MISSING
    assert (await people.link("erin", TEAMS, unlink=True))[0] is LinkStatus.NOT_LINKED
    assert (await people.link("dana", SLACK, unlink=True))[0] is LinkStatus.OK
    dana = await people.get("dana")
    assert dana is not None and dana.identities == [TEAMS]
    assert await people.whois(SLACK) is None


async def test_a_link_code_is_spent_once_and_a_redelivery_is_no_second_link(store: Store) -> None:
    people = store.people
    await people.put(Person(person="dana"))
    assert (await people.new_code("dana", "AAAA-BBBB", 600_000, 5, 600_000))[0] is LinkStatus.OK
    assert await people.use_code("AAAA-BBBB", SLACK) == (LinkStatus.OK, "dana")
    assert await people.use_code("AAAA-BBBB", SLACK) == (LinkStatus.OK, "dana"), "the same message again"
    assert (await people.use_code("AAAA-BBBB", OTHER))[0] is LinkStatus.USED
    assert (await people.use_code("ZZZZ-ZZZZ", OTHER))[0] is LinkStatus.UNKNOWN
    assert (await people.new_code("ghost", "CCCC-DDDD", 600_000, 5, 600_000))[0] is LinkStatus.MISSING


async def test_removing_a_person_frees_their_identities(store: Store) -> None:
    people = store.people
    await people.put(Person(person="dana", identities=[SLACK, TEAMS]))
    assert await people.remove("dana")
    assert not await people.remove("dana")
    assert await people.whois(TEAMS) is None
    assert (await people.put(Person(person="erin", identities=[TEAMS])))[1] is None


async def test_person_and_group_approvers_resolve_through_the_directory(store: Store) -> None:
    await store.people.put(Person(person="dana", identities=[SLACK], groups=["sre"]))
    await store.put_agent(AgentDefinition(name="ops", human_input=HumanInput(approvers=["group:sre"])))
    assert await may_decide(store, "ops", None, SLACK)
    assert await may_decide(store, "ops", None, "person:dana")
    assert not await may_decide(store, "ops", None, OTHER)
    assert await may_decide(store, "ops", TEAMS, OTHER) is False
