"""The audit history: one bounded record per settled prompt, written once by the outbox to its thread's
partition, read in pages merged from every partition (and the one stream of earlier versions) by filter and
time window, trimmed by age and count."""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from redis.asyncio.cluster import RedisCluster

from gateway.base.cursors import history_cursor, history_positions
from gateway.base.models import InboundMessage, PromptRequest, ReasonCode, RunRequest
from gateway.decision.granting import record_grant
from gateway.decision.history import MAX_RECORD_BYTES, SCAN_BUDGET, HistoryOutcome, HistoryQuery, read_history
from gateway.decision.outbox import Outbox
from gateway.decision.service import Gateway
from gateway.delivery.channel import Channels
from gateway.rules import notices
from gateway.rules.grants import Grant, GrantMatch, GrantRequest
from gateway.store import FeedEntry, OutboxPass, Store, keys
from gateway.store.results import OutboxMode
from tests.support.memory_channel import MemoryChannel

THREAD = "slack:C0456:1712345678.000100"
OTHER_THREAD = "slack:C0999:1712345678.000200"
ALICE, BOB = "slack:UALICE", "slack:UBOB"
APPROVAL = {
    "kind": "approval",
    "questions": [{"question": "Allow db__drop to run?"}],
    "tool_call": {"name": "db__drop", "arguments": {"database": "staging"}},
}
QUESTION = {"kind": "text", "questions": [{"question": "Which branch?"}]}
MINUTE = 60.0
WIDTH = len(keys.EVERY_PARTITION)
STREAMS = {part: keys.history_feed(part) for part in keys.EVERY_PARTITION}


class Clock:
    """The gateway's clock, set by the test: when prompts are raised and settled."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def service(store: Store, channel: MemoryChannel, clock: Clock) -> AsyncIterator[Gateway]:
    gateway = Gateway(store, Channels([channel]), clock=clock, sweep_interval=3600)
    await gateway.start()
    yield gateway
    await gateway.stop()


async def ask(
    gateway: Gateway, request: dict[str, Any], *, agent: str = "ops", thread: str = THREAD, by: str = ALICE
) -> tuple[str, str]:
    """A run (``by`` starts it) and a prompt raised in it: (run id, prompt id)."""
    run = await gateway.create_run(RunRequest(thread_id=thread, agent=agent, started_by=by))
    prompt = await gateway.raise_prompt(run.run_id, PromptRequest.model_validate(request))
    return run.run_id, prompt.prompt_id


async def settled(gateway: Gateway, prompt_id: str, text: str, by: str = ALICE) -> None:
    """``by`` answers ``text`` over REST, and the outbox has delivered it."""
    await gateway.answer(prompt_id, by, text=text)
    prompt = await gateway.get_prompt(prompt_id)
    assert await gateway.outbox.flush(prompt.thread_id)


async def everything(store: Store, query: HistoryQuery | None = None, **kwargs: Any) -> list[dict[str, Any]]:
    """Every record the query keeps, following the cursor to the end."""
    found: list[dict[str, Any]] = []
    after = None
    for _ in range(1000):
        page = await read_history(store, query or HistoryQuery(), after, 100, **kwargs)
        found += page.items
        if page.next is None:
            return found
        after = history_positions(page.next, WIDTH)
    raise AssertionError("the cursor never ended")


async def stored(store: Store) -> list[tuple[tuple[int, int], int, str]]:
    """Every entry of every history stream: (stream id as numbers, partition, record JSON)."""
    found = []
    for part, stream in STREAMS.items():
        for entry_id, fields in await store.redis.xrange(stream):
            ms, seq = entry_id.split("-")
            found.append(((int(ms), int(seq)), part, fields["j"]))
    return found


async def history_length(store: Store) -> int:
    return sum([await store.redis.xlen(stream) for stream in STREAMS.values()])


def in_merged_order(entries: list[tuple[tuple[int, int], int, str]]) -> list[str]:
    """The records' prompt ids newest first: by stream id, then partition, descending."""
    return [json.loads(text)["prompt_id"] for *_, text in sorted(entries, reverse=True)]


# What a record holds -----------------------------------------------------------------------------------


async def test_an_approved_call_is_recorded_with_who_when_and_what_was_asked(service: Gateway) -> None:
    run_id, prompt_id = await ask(service, APPROVAL)
    await settled(service, prompt_id, "approve")
    [record] = await everything(service.store)
    assert record["prompt_id"] == prompt_id and record["run_id"] == run_id and record["agent"] == "ops"
    assert record["outcome"] == "approved" and record["by"] == ALICE and record["answered_by"] == ALICE
    assert record["tool_call"] == {"name": "db__drop", "arguments": {"database": "staging"}}
    assert record["answers"][0]["answer"] == ["Approve"]
    assert record["questions"][0]["question"] == "Allow db__drop to run?"
    assert record["settled_at"] and record["recorded_at"].endswith("Z")
    assert (record["votes"], record["grants_used"], record["escalations"]) == ([], [], [])
    assert record["truncated"] is False


@pytest.mark.parametrize("how", ["press", "typed", "rest"])
async def test_an_approve_for_the_session_is_kept_with_its_answer_so_its_card_and_record_show_the_grant(
    service: Gateway, channel: MemoryChannel, how: str
) -> None:
    run_id, prompt_id = await ask(service, APPROVAL)
    if how == "rest":
        pattern = GrantMatch(name="db__drop", arguments={"database": "staging"})
        await service.answer(prompt_id, ALICE, text="approve", grant=pattern)
        assert (
            await record_grant(
                service.store,
                await service.get_prompt(prompt_id),
                ALICE,
                GrantRequest(scope="run", match=pattern),
                service.now_ms(),
            )
            is not None
        )
    else:
        fields: dict[str, Any] = (
            {"text": "always allow"}
            if how == "typed"
            else {"text": "Approve", "answers": [{"question_id": "q1", "answer": ["Approve"]}], "grant": True}
        )
        await service.receive(
            InboundMessage(thread_id=THREAD, sender=ALICE, prompt_id=prompt_id, event_id=how, **fields)
        )
    assert await service.outbox.flush(THREAD)
    (grant,) = await service.store.grants.in_force(THREAD, run_id)
    (record,) = await everything(service.store)
    (audit,) = channel.items_of("pending_prompt_resolved")
    granted = {"name": "db__drop", "arguments": {"database": "staging"}}
    assert (grant.prompt_id, grant.match.model_dump()) == (prompt_id, granted)
    assert record["granted"] == granted and record["by"] == ALICE
    assert (await service.get_prompt(prompt_id)).public()["granted"] == granted
    assert audit.metadata["prompt"]["granted"] == granted
    assert notices.answered_by(audit) == (
        'Approved by slack:UALICE, and for this session: `db__drop {"database":"staging"}`'
    )


async def test_a_grant_revoked_before_its_approve_is_confirmed_is_not_made_again(service: Gateway) -> None:
    run_id, prompt_id = await ask(service, APPROVAL)
    pattern = GrantMatch(name="db__drop", arguments={"database": "staging"})
    await service.answer(prompt_id, ALICE, text="approve", grant=pattern)
    (grant,) = await service.store.grants.in_force(THREAD, run_id)
    assert await service.store.grants.revoke(THREAD, run_id, grant.grant_id) is not None
    answered = await service.get_prompt(prompt_id)
    request = GrantRequest(scope="run", match=pattern)
    confirmed = await record_grant(service.store, answered, ALICE, request, service.now_ms())
    assert isinstance(confirmed, Grant) and confirmed.grant_id == grant.grant_id
    assert await service.store.grants.in_force(THREAD, run_id) == []


async def test_each_way_of_settling_has_its_outcome(service: Gateway, clock: Clock) -> None:
    _, approved = await ask(service, APPROVAL)
    await settled(service, approved, "yes")
    _, denied = await ask(service, APPROVAL)
    await settled(service, denied, "not on a Friday")  # anything but an approve token denies
    _, answered = await ask(service, QUESTION)
    await settled(service, answered, "main")
    _, cancelled = await ask(service, QUESTION)
    await service.cancel_prompt(cancelled, "not now", by=BOB)
    _, expired = await ask(service, {**QUESTION, "expires_in_seconds": 60})
    clock.now += 61
    assert await service.expire_due() == 1
    await service.outbox.flush(THREAD)

    records = {record["prompt_id"]: record for record in await everything(service.store)}
    assert {pid: records[pid]["outcome"] for pid in records} == {
        approved: "approved",
        denied: "denied",
        answered: "answered",
        cancelled: "cancelled",
        expired: "expired",
    }
    assert records[cancelled]["cancelled_by"] == BOB and records[cancelled]["by"] == BOB
    assert records[cancelled]["reason"] == "not now" and "answers" not in records[cancelled]
    assert records[expired]["reason_code"] == ReasonCode.EXPIRED and records[expired]["by"] is None
    assert records[denied]["answers"][0]["answer"] == ["Deny"]


async def test_a_superseded_prompt_is_recorded_as_cancelled_by_nobody(service: Gateway) -> None:
    run_id, first = await ask(service, QUESTION)
    await service.raise_prompt(run_id, PromptRequest.model_validate(QUESTION))
    await service.outbox.flush(THREAD)
    [record] = await everything(service.store)
    assert (record["prompt_id"], record["outcome"], record["by"]) == (first, "cancelled", None)
    assert record["reason_code"] == "superseded"


async def test_a_huge_answer_and_huge_arguments_are_cut_to_a_bounded_record(service: Gateway) -> None:
    arguments = {"script": "x" * 300_000, "rows": list(range(5_000)), "deep": {"a": {"b": {"c": {}}}}}
    _, approval = await ask(service, {**APPROVAL, "tool_call": {"name": "Bash", "arguments": arguments}})
    await settled(service, approval, "approve")
    _, text = await ask(service, QUESTION)
    await settled(service, text, "y" * 39_000)

    raws = [text for *_, text in await stored(service.store)]
    assert len(raws) == 2 and all(len(raw.encode()) <= MAX_RECORD_BYTES for raw in raws)
    records = {record["prompt_id"]: record for record in await everything(service.store)}
    assert records[approval]["truncated"] is True and records[text]["truncated"] is True
    answer = records[text]["answers"][0]["answer"][0]
    assert answer.startswith("yyyy") and answer.endswith("…[cut: 35000 more characters]")
    assert records[approval]["tool_call"]["name"] == "Bash"  # who asked for what survives every cut


# Once, whatever the outbox does -------------------------------------------------------------------------


async def test_a_record_is_written_once_even_when_the_outbox_drains_twice(store: Store, clock: Clock) -> None:
    """A process appends a batch (the record with the event), then dies before acknowledging it: the next
    drain appends the same batch again, and the history still holds the prompt once. (On one server the
    append is the acknowledgement's own step: the process died before either.)"""
    gateway = Gateway(store, Channels([MemoryChannel("slack")]), clock=clock, sweep_interval=3600)
    _, prompt_id = await ask(gateway, QUESTION)
    await gateway.outbox.idle()  # the question posted and announced
    await store.resolve(THREAD, prompt_id, [], ALICE, "turn_1", gateway.now_ms())
    dying = Outbox(store, Channels([MemoryChannel("slack")]))
    [batch] = await store.take_outboxes([OutboxPass(THREAD, "dead", 60_000, OutboxMode.ACQUIRE)])
    assert batch is not None
    prompts = {pid: store.codec.decode(fields) for pid, fields in batch.prompts.items()}
    if isinstance(store.redis, RedisCluster):
        await dying._publish({THREAD: batch}, prompts)
    await store.take_outboxes([OutboxPass(THREAD, "dead", 60_000, OutboxMode.RELEASE)])

    survivor = Outbox(store, Channels([MemoryChannel("slack")]))
    assert await survivor.drain(THREAD)
    assert await survivor.drain(THREAD)

    assert await history_length(store) == 1
    assert [record["prompt_id"] for record in await everything(store)] == [prompt_id]


async def test_a_prompt_answered_in_chat_is_recorded_once(service: Gateway, channel: MemoryChannel) -> None:
    _, prompt_id = await ask(service, APPROVAL)
    message = InboundMessage(thread_id=THREAD, sender=ALICE, text="approve", event_id="ev1")
    await service.receive(message)
    await service.receive(message)  # the platform delivers it again
    await service.outbox.flush(THREAD)
    await service.outbox.sweep(everything=True)
    [record] = await everything(service.store)
    assert (record["prompt_id"], record["outcome"]) == (prompt_id, "approved")


# Filters --------------------------------------------------------------------------------------------------


async def test_filters_keep_only_the_records_that_match_every_one_given(service: Gateway) -> None:
    ops_run, by_alice = await ask(service, APPROVAL)
    await settled(service, by_alice, "approve")
    _, by_bob = await ask(service, APPROVAL, by=BOB)
    await settled(service, by_bob, "deny", by=BOB)
    _, deploy = await ask(service, QUESTION, agent="deploy", thread=OTHER_THREAD)
    await settled(service, deploy, "main")

    async def ids(**filters: Any) -> list[str]:
        return [record["prompt_id"] for record in await everything(service.store, HistoryQuery(**filters))]

    assert await ids(agent="ops") == [by_bob, by_alice]  # newest first
    assert await ids(agent="deploy") == [deploy]
    assert await ids(run=ops_run) == [by_alice]
    assert await ids(thread=OTHER_THREAD) == [deploy]
    assert await ids(by=BOB) == [by_bob]
    assert await ids(outcome=HistoryOutcome.DENIED) == [by_bob]
    assert await ids(outcome=HistoryOutcome.APPROVED, by=BOB) == []
    assert await ids(agents=frozenset({"deploy"})) == [deploy]  # a token's scope
    assert await ids(agent="ops", agents=frozenset({"deploy"})) == []


def test_votes_count_as_settling_for_the_person_filter() -> None:
    """A record naming voters (an approval needing several) is found by each of them."""
    record = {"prompt_id": "prm_1", "agent": "ops", "answered_by": ALICE, "settled_at": None}
    record |= {"votes": [{"by": BOB, "answer": "Approve", "at": "2026-01-01T00:00:00Z"}]}
    assert HistoryQuery(by=BOB).keeps(record, 0) and HistoryQuery(by=ALICE).keeps(record, 0)
    assert not HistoryQuery(by="slack:UCAROL").keeps(record, 0)


# Paging ---------------------------------------------------------------------------------------------------


async def test_the_cursor_pages_through_every_record_once_either_way(service: Gateway) -> None:
    made = []
    for _ in range(7):
        _, prompt_id = await ask(service, QUESTION)
        await settled(service, prompt_id, "main")
        made.append(prompt_id)

    pages, after = [], None
    while True:
        page = await read_history(service.store, HistoryQuery(), after, 3)
        pages.append([record["prompt_id"] for record in page.items])
        if page.next is None:
            break
        after = history_positions(page.next, WIDTH)
    assert [pid for page in pages for pid in page] == made[::-1]
    assert [len(page) for page in pages[:2]] == [3, 3]
    oldest = await everything(service.store, newest_first=False)
    assert [record["prompt_id"] for record in oldest] == made


async def test_a_request_reads_a_bounded_part_of_the_history_and_says_where_to_go_on(
    service: Gateway,
) -> None:
    for agent in ("ops", "ops", "ops", "ops", "deploy"):
        _, prompt_id = await ask(service, QUESTION, agent=agent)
        await settled(service, prompt_id, "main")
    query = HistoryQuery(agent="deploy")
    first = await read_history(service.store, query, None, 10, budget=2, newest_first=False)
    assert first.items == [] and first.next is not None  # nothing found yet, and more to read
    seen, after = [], history_positions(first.next, WIDTH)
    for _ in range(5):
        page = await read_history(service.store, query, after, 10, budget=2, newest_first=False)
        seen += page.items
        if page.next is None:
            break
        after = history_positions(page.next, WIDTH)
    assert [record["agent"] for record in seen] == ["deploy"]


# Time windows ---------------------------------------------------------------------------------------------


async def test_since_and_until_select_by_when_the_prompt_settled_until_excluded(
    service: Gateway, clock: Clock
) -> None:
    start = clock.now
    moments = {}
    for minutes in (-30, -20, -10):
        clock.now = start + minutes * MINUTE
        _, prompt_id = await ask(service, QUESTION)
        await settled(service, prompt_id, "main")
        moments[minutes] = prompt_id

    def at(minutes: float) -> int:
        return int((start + minutes * MINUTE) * 1000)

    async def window(since: float | None, until: float | None) -> list[str]:
        query = HistoryQuery(
            since_ms=None if since is None else at(since), until_ms=None if until is None else at(until)
        )
        return [record["prompt_id"] for record in await everything(service.store, query)]

    assert await window(-25, None) == [moments[-10], moments[-20]]
    assert await window(None, -15) == [moments[-20], moments[-30]]
    assert await window(-20, -10) == [moments[-20]]  # since included, until left out
    assert await window(-9, None) == []
    # Consecutive windows hold every record once.
    assert sorted(await window(None, -20) + await window(-20, None)) == sorted(moments.values())


async def test_a_record_written_long_after_its_prompt_settled_counts_from_when_it_was_written(
    service: Gateway, clock: Clock
) -> None:
    """Every gateway process was down for two hours after the prompt settled: windows that ended before
    the record existed never gain it, and the window open when it was written has it."""
    written = time.time()
    clock.now = written - 2 * 3600
    _, prompt_id = await ask(service, QUESTION)
    await settled(service, prompt_id, "main")

    def window(since_s: float, until_s: float) -> HistoryQuery:
        return HistoryQuery(since_ms=int(since_s * 1000), until_ms=int(until_s * 1000))

    assert await everything(service.store, window(clock.now - 60, clock.now + 60)) == []
    [record] = await everything(service.store, window(written - 60, written + 60))
    assert record["prompt_id"] == prompt_id


# Partitions ------------------------------------------------------------------------------------------------

THREADS = [f"slack:C{n:04d}:1712345678.000100" for n in range(16)]


async def paged(store: Store, query: HistoryQuery, limit: int, **kwargs: Any) -> tuple[list[str], int]:
    """Every record's prompt id following the cursor to the end, ``limit`` a page; and the pages read."""
    found: list[str] = []
    after = None
    for pages in range(1, 2000):
        page = await read_history(store, query, after, limit, **kwargs)
        assert len(page.items) <= limit
        found += [record["prompt_id"] for record in page.items]
        if page.next is None:
            return found, pages
        after = history_positions(page.next, WIDTH)
    raise AssertionError("the cursor never ended")


# Stream ids the tests below write by hand start an hour ago: within any retention, so a sweeper trimming
# the feeds by age (every gateway's, every 2 s) keeps them.
RECENT_MS = (int(time.time()) - 3600) * 1000


def recent(entry_id: str) -> str:
    """``"<ms>-<seq>"`` moved to ``RECENT_MS + ms``, keeping the order of ids written this way."""
    ms, _, seq = entry_id.partition("-")
    return f"{RECENT_MS + int(ms)}-{seq}"


async def append(store: Store, part: int, record: dict[str, Any], entry_id: str = "*") -> str:
    """A record appended straight to a history stream, as the outbox (or an earlier version) wrote it."""
    return str(await store.redis.xadd(STREAMS[part], {"j": json.dumps(record)}, id=entry_id))


async def test_records_of_many_threads_are_written_to_their_partitions_and_read_in_one_order(
    service: Gateway,
) -> None:
    assert len({keys.partition(thread) for thread in THREADS}) >= 6
    made: dict[str, list[str]] = {thread: [] for thread in THREADS}
    for round_ in range(2):
        for thread in THREADS:
            _, prompt_id = await ask(service, QUESTION, thread=thread, agent=("ops", "deploy")[round_])
            await settled(service, prompt_id, "main")
            made[thread].append(prompt_id)

    entries = await stored(service.store)
    for thread in THREADS:  # each record in its thread's partition, none in the old stream
        parts = {part for _, part, text in entries if json.loads(text)["thread_id"] == thread}
        assert parts == {keys.partition(thread)}, thread
    assert len(entries) == 32
    newest = in_merged_order(entries)
    for limit, budget in ((3, 1000), (1, 1000), (5, 2), (32, 7)):
        found, pages = await paged(service.store, HistoryQuery(), limit, budget=budget)
        assert found == newest, (limit, budget)
        assert pages >= 32 // min(limit, budget)
        oldest, _ = await paged(service.store, HistoryQuery(), limit, budget=budget, newest_first=False)
        assert oldest == newest[::-1], (limit, budget)
    for thread in THREADS[:3]:  # a thread's records in exactly the order they settled
        assert (await paged(service.store, HistoryQuery(thread=thread), 1))[0] == made[thread][::-1]
    deploy, _ = await paged(service.store, HistoryQuery(agent="deploy"), 2, budget=3)
    assert deploy == [pid for pid in newest if pid in {ids[1] for ids in made.values()}]


async def test_many_records_in_every_partition_with_equal_ids_page_in_one_order(store: Store) -> None:
    """Partitions of one Redis server write the same ids in the same millisecond: ties go by partition,
    so each order is exactly the other reversed, whatever the page sizes and read budgets."""
    rng = random.Random(7)
    threads = {
        part: [t for t in (f"web:room{n}" for n in range(200)) if keys.partition(t) == part][:2]
        for part in range(keys.PARTITIONS)
    }
    entries = []
    for part in keys.EVERY_PARTITION:
        for ms in sorted(rng.sample(range(1_000, 1_060), 25)):
            for seq in range(rng.choice((1, 1, 2))):
                thread = rng.choice(threads[part] if part != keys.LEGACY else threads[rng.randrange(12)])
                record = {
                    "prompt_id": f"prm_{part}_{ms}_{seq}",
                    "thread_id": thread,
                    "agent": rng.choice("ab"),
                }
                await append(store, part, record, recent(f"{ms}-{seq}"))
                entries.append(((ms, seq), part, json.dumps(record)))
    newest = in_merged_order(entries)
    for limit, budget in ((7, 1000), (50, 1000), (500, 1000), (4, 9), (10, 1)):
        assert (await paged(store, HistoryQuery(), limit, budget=budget))[0] == newest, (limit, budget)
        oldest, _ = await paged(store, HistoryQuery(), limit, budget=budget, newest_first=False)
        assert oldest == newest[::-1], (limit, budget)

    agent_b = [
        json.loads(text)["prompt_id"]
        for *_, text in sorted(entries, reverse=True)
        if json.loads(text)["agent"] == "b"
    ]
    assert (await paged(store, HistoryQuery(agent="b"), 6, budget=11))[0] == agent_b
    thread = threads[3][0]
    own = [
        json.loads(text)["prompt_id"]
        for *_, text in sorted(entries)
        if json.loads(text)["thread_id"] == thread
    ]
    assert any(part == keys.LEGACY and thread in text for _, part, text in entries)  # in the old stream too
    assert (await paged(store, HistoryQuery(thread=thread), 2, newest_first=False))[0] == own


async def test_a_record_written_while_paging_newest_first_is_not_served_below_older_ones(
    store: Store,
) -> None:
    """Newest first, a partition the pages took nothing from stands where the pages stand: a record it gains
    meanwhile is newer than all of them, and does not turn up at the end; oldest first it does."""
    quiet, busy = keys.partition(THREADS[0]), (keys.partition(THREADS[0]) + 1) % keys.PARTITIONS
    for n in range(3):
        await append(store, busy, {"prompt_id": f"prm_old{n}"})
    first = await read_history(store, HistoryQuery(), None, 1)
    start = await read_history(store, HistoryQuery(), None, 1, newest_first=False)
    assert [record["prompt_id"] for record in first.items + start.items] == ["prm_old2", "prm_old0"]
    await append(store, quiet, {"prompt_id": "prm_new"})
    await append(store, busy, {"prompt_id": "prm_new_busy"})
    assert first.next is not None and start.next is not None

    async def rest(cursor: str, newest_first: bool) -> list[str]:
        after: str | None = cursor
        found: list[str] = []
        while after is not None:
            page = await read_history(
                store, HistoryQuery(), history_positions(after, WIDTH), 1, newest_first=newest_first
            )
            found += [record["prompt_id"] for record in page.items]
            after = page.next
        return found

    assert await rest(first.next, True) == ["prm_old1", "prm_old0"]
    assert await rest(start.next, False) == ["prm_old1", "prm_old2", "prm_new", "prm_new_busy"]


async def test_a_cursor_from_before_the_partitions_goes_on_after_its_id_in_every_partition(
    store: Store,
) -> None:
    """An ``h1:`` cursor names one stream id of the old ``tg:history``: newest first goes on below it in every
    partition, oldest first above it, so no record either side is lost."""
    one, other = keys.partition(THREADS[0]), keys.partition(THREADS[1])
    assert one != other
    layout = {1000: keys.LEGACY, 2000: one, 3000: keys.LEGACY, 4000: other, 5000: keys.LEGACY, 6000: one}
    for ms, part in layout.items():
        await append(store, part, {"prompt_id": f"prm_{ms}", "agent": "ops"}, recent(f"{ms}-0"))
    old = history_positions(history_cursor(recent("3000-0")), WIDTH)
    assert old == (recent("3000-0"),) * WIDTH

    async def ids(newest_first: bool, limit: int) -> list[str]:
        found: list[str] = []
        after: tuple[str, ...] | None = old
        while after is not None:
            page = await read_history(store, HistoryQuery(), after, limit, newest_first=newest_first)
            found += [record["prompt_id"] for record in page.items]
            after = history_positions(page.next, WIDTH) if page.next else None
        return found

    for limit in (1, 2, 10):
        assert await ids(True, limit) == ["prm_2000", "prm_1000"]
        assert await ids(False, limit) == ["prm_4000", "prm_5000", "prm_6000"]


async def test_records_of_earlier_versions_are_served_merged_with_new_ones(service: Gateway) -> None:
    """Records the one-stream history of earlier versions holds (``tg:history``, field ``j``) are read with
    the partitions' records, by every filter."""
    old = {
        "prompt_id": "prm_legacy",
        "run_id": "run_legacy",
        "thread_id": THREAD,
        "agent": "ops",
        "outcome": "approved",
        "by": ALICE,
        "answered_by": ALICE,
        "settled_at": "2026-01-01T00:00:00+00:00",
        "votes": [],
        "grants_used": [],
        "escalations": [],
        "truncated": False,
    }
    await service.store.redis.xadd(keys.HISTORY, {"j": json.dumps(old)})
    _, first = await ask(service, APPROVAL)
    await settled(service, first, "approve")
    _, second = await ask(service, QUESTION, thread=OTHER_THREAD)
    await settled(service, second, "main")

    async def ids(query: HistoryQuery, **kwargs: Any) -> list[str]:
        return (await paged(service.store, query, 1, **kwargs))[0]

    assert await ids(HistoryQuery()) == [second, first, "prm_legacy"]
    assert await ids(HistoryQuery(), newest_first=False) == ["prm_legacy", first, second]
    assert await ids(HistoryQuery(thread=THREAD)) == [first, "prm_legacy"]
    assert await ids(HistoryQuery(outcome=HistoryOutcome.APPROVED, by=ALICE)) == [first, "prm_legacy"]
    [record] = (await read_history(service.store, HistoryQuery(run="run_legacy"), None, 5)).items
    assert record["recorded_at"].endswith("Z") and record["answered_by"] == ALICE


async def test_a_page_reads_the_partitions_together_in_a_few_steps(store: Store) -> None:
    """A scan through records spread evenly over the partitions, none of which the filter keeps, reads
    them in a few rounds of parallel reads, and not many more entries than its budget."""
    for n in range(keys.PARTITIONS * 100):
        await append(
            store, n % keys.PARTITIONS, {"prompt_id": f"prm_{n}", "agent": "ops"}, recent(f"{1_000 + n}-0")
        )
    real, inflight, steps, fetched = store.history_rows, [0], [0], [0]

    async def counted(*args: Any, **kwargs: Any) -> list[tuple[str, str]]:
        inflight[0] += 1
        steps[0] += inflight[0] == 1  # a read starting while none is under way begins a step
        await asyncio.sleep(0)  # the reads of one step all start before any ends
        try:
            rows = await real(*args, **kwargs)
        finally:
            inflight[0] -= 1
        fetched[0] += len(rows)
        return rows

    store.history_rows = counted  # type: ignore[method-assign]
    for limit in (1, 50, 500):
        steps[0] = fetched[0] = 0
        page = await read_history(store, HistoryQuery(agent="deploy"), None, limit)
        assert page.items == [] and page.next is not None
        assert steps[0] <= 4 and SCAN_BUDGET <= fetched[0] <= 2 * SCAN_BUDGET, (limit, steps, fetched)


# Retention -----------------------------------------------------------------------------------------------


async def test_records_past_the_retention_are_trimmed(redis_client: Any, clock: Clock) -> None:
    store = Store(redis_client, history_max_age_ms=300)
    await store.load()
    gateway = Gateway(store, Channels([MemoryChannel("slack")]), clock=clock, sweep_interval=3600)
    _, old = await ask(gateway, QUESTION)
    await settled(gateway, old, "main")
    assert await history_length(store) == 1
    await asyncio.sleep(0.4)
    _, new = await ask(gateway, QUESTION)
    await settled(gateway, new, "main")  # an append trims by count only: the sweeper, by age
    assert await history_length(store) == 2
    await store.trim_feeds(int(time.time() * 1000))
    assert [record["prompt_id"] for record in await everything(store)] == [new]
    await asyncio.sleep(0.4)
    await store.trim_feeds(int(time.time() * 1000))
    assert await history_length(store) == 0


async def test_the_history_is_capped_by_count(redis_client: Any) -> None:
    store = Store(redis_client, history_maxlen=10)
    await store.load()

    stream = keys.history_feed(keys.partition(THREAD))
    for index in range(600):
        record = json.dumps({"prompt_id": f"prm_{index}", "agent": "ops"})
        await store.publish([FeedEntry(stream, f"prm_{index}", record)], [])
    assert await store.redis.xlen(stream) <= 10 + 200  # whole nodes are trimmed (MAXLEN ~)
    assert await store.redis.xlen(keys.EVENTS) == 0  # the feeds keep their own caps
