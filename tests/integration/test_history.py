"""The audit history: one bounded record per settled prompt, written once by the outbox, read in pages
by filter and time window, trimmed by age and count."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from gateway.channel import Channels
from gateway.cursors import history_position
from gateway.history import MAX_RECORD_BYTES, HistoryOutcome, HistoryQuery, read_history
from gateway.models import InboundMessage, PromptRequest, ReasonCode, RunRequest
from gateway.outbox import Outbox
from gateway.service import Gateway
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
        after = history_position(page.next)
    raise AssertionError("the cursor never ended")


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

    stored = [row[1]["j"] for row in await service.store.redis.xrange(keys.HISTORY)]
    assert all(len(raw.encode()) <= MAX_RECORD_BYTES for raw in stored)
    records = {record["prompt_id"]: record for record in await everything(service.store)}
    assert records[approval]["truncated"] is True and records[text]["truncated"] is True
    answer = records[text]["answers"][0]["answer"][0]
    assert answer.startswith("yyyy") and answer.endswith("…[cut: 35000 more characters]")
    assert records[approval]["tool_call"]["name"] == "Bash"  # who asked for what survives every cut


# Once, whatever the outbox does -------------------------------------------------------------------------


async def test_a_record_is_written_once_even_when_the_outbox_drains_twice(store: Store, clock: Clock) -> None:
    """A process appends a batch (the record with the event), then dies before acknowledging it: the next
    drain appends the same batch again, and the history still holds the prompt once."""
    gateway = Gateway(store, Channels([MemoryChannel("slack")]), clock=clock, sweep_interval=3600)
    _, prompt_id = await ask(gateway, QUESTION)
    await gateway.outbox.idle()  # the question posted and announced
    await store.resolve(THREAD, prompt_id, [], ALICE, "turn_1", gateway.now_ms())
    dying = Outbox(store, Channels([MemoryChannel("slack")]))
    [batch] = await store.take_outboxes([OutboxPass(THREAD, "dead", 60_000, OutboxMode.ACQUIRE)])
    assert batch is not None
    prompts = {pid: store.codec.decode(fields) for pid, fields in batch.prompts.items()}
    await dying._publish([batch], prompts)
    await store.take_outboxes([OutboxPass(THREAD, "dead", 60_000, OutboxMode.RELEASE)])

    survivor = Outbox(store, Channels([MemoryChannel("slack")]))
    assert await survivor.drain(THREAD)
    assert await survivor.drain(THREAD)

    assert await store.redis.xlen(keys.HISTORY) == 1
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
        after = history_position(page.next)
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
    seen, after = [], history_position(first.next)
    for _ in range(5):
        page = await read_history(service.store, query, after, 10, budget=2, newest_first=False)
        seen += page.items
        if page.next is None:
            break
        after = history_position(page.next)
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


# Retention -----------------------------------------------------------------------------------------------


async def test_records_past_the_retention_are_trimmed(redis_client: Any, clock: Clock) -> None:
    store = Store(redis_client, history_max_age_ms=300)
    await store.load()
    gateway = Gateway(store, Channels([MemoryChannel("slack")]), clock=clock, sweep_interval=3600)
    _, old = await ask(gateway, QUESTION)
    await settled(gateway, old, "main")
    assert await store.redis.xlen(keys.HISTORY) == 1
    await asyncio.sleep(0.4)
    _, new = await ask(gateway, QUESTION)
    await settled(gateway, new, "main")  # the append trims what is past the retention
    assert [record["prompt_id"] for record in await everything(store)] == [new]
    await asyncio.sleep(0.4)
    await store.trim_feeds(int(time.time() * 1000))  # the sweeper trims a quiet history too
    assert await store.redis.xlen(keys.HISTORY) == 0


async def test_the_history_is_capped_by_count(redis_client: Any) -> None:
    store = Store(redis_client, history_maxlen=10)
    await store.load()

    for index in range(600):
        record = json.dumps({"prompt_id": f"prm_{index}", "agent": "ops"})
        await store.publish([FeedEntry(keys.HISTORY, f"prm_{index}", record)], [])
    assert await store.redis.xlen(keys.HISTORY) <= 10 + 200  # whole nodes are trimmed (MAXLEN ~)
    assert await store.redis.xlen(keys.EVENTS) == 0  # the feeds keep their own caps
