"""Redis Cluster: every script stays in its thread's slot, and no command the gateway sends crosses slots.

The session's 3-master cluster enforces both: a script touching a key of another slot fails, and so does
a multi-key command or transaction over several slots. So a scenario that drives every store method and
every script on the cluster, without an error, is the proof; the tests also check the cluster refuses
what they claim it would.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest
from redis.asyncio.cluster import RedisCluster as ClusterClient
from redis.exceptions import RedisClusterException, ResponseError

from gateway.base import metrics
from gateway.base.models import (
    AgentDefinition,
    HumanInput,
    InboundMessage,
    PromptRequest,
    ReasonCode,
    RunRequest,
    ToolCall,
)
from gateway.base.ratelimit import RateLimiter
from gateway.decision.granting import granted, record_grant
from gateway.decision.history import HistoryQuery, read_history
from gateway.decision.service import AnswerStatus, Gateway, Outcome
from gateway.decision.session_runs import session_run
from gateway.delivery.channel import Channels
from gateway.delivery.feeds import Feeds
from gateway.delivery.lease import Lease
from gateway.delivery.waiters import Waiters
from gateway.delivery.webhooks import WebhookDispatcher
from gateway.rules.grants import GrantRequest, exact_match
from gateway.store import Store, connect, keys
from gateway.store.scripts import LEASE_SCRIPTS, PLAIN_SCRIPTS, THREAD_SCRIPTS, WEBHOOK_SCRIPTS, Scripts
from gateway.store.stream_reader import StreamReader, StreamSource
from gateway.store.webhook_queue import WebhookQueue
from tests.cluster.slotwatch import SlotWatch
from tests.support.conditions import eventually
from tests.support.feeds import feed_entries
from tests.support.memory_channel import MemoryChannel
from tests.support.redis_cluster import RedisCluster

# Threads chosen to land on three different masters (checked below), so the scenario crosses nodes.
THREADS = ["slack:C0456:1712345678.000100", "telegram:-1001234567890", "discord:80351110224678912"]
QUESTION = {"kind": "text", "questions": [{"question": "Which branch?"}]}


@pytest.fixture
async def cluster_client(redis_cluster: RedisCluster) -> AsyncIterator[Any]:
    redis_cluster.flush()
    connection = connect(redis_cluster.url)
    await connection.client.initialize()  # learn the slot map now: the tests ask it before any command
    yield connection.client
    await connection.client.aclose()


class Recorder:
    """Wraps an object's public coroutine methods to record which were called (our own collaborator)."""

    def __init__(self, target: object) -> None:
        self.called: set[str] = set()
        for name in public_coroutines(type(target)):
            setattr(target, name, self._wrap(name, getattr(target, name)))

    def _wrap(self, name: str, method: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def recorded(*args: Any, **kwargs: Any) -> Any:
            self.called.add(name)
            return await method(*args, **kwargs)

        return recorded


def public_coroutines(cls: type) -> set[str]:
    return {
        name
        for name, member in inspect.getmembers(cls, inspect.iscoroutinefunction)
        if not name.startswith("_")
    }


async def test_redis_cluster_url_opens_the_cluster_client(redis_cluster: RedisCluster) -> None:
    connection = connect(redis_cluster.url)
    try:
        assert isinstance(connection.client, ClusterClient)
        assert connection.durable
        assert connection.description.startswith("Redis Cluster at redis://127.0.0.1:")
        assert await connection.client.ping()
    finally:
        await connection.client.aclose()


async def test_a_burst_beyond_the_connection_limit_waits_for_a_connection_instead_of_failing(
    redis_cluster: RedisCluster,
) -> None:
    # redis-py's own cluster client raises MaxConnectionsError once a node's connections are all busy.
    connection = connect(redis_cluster.url, max_connections=4)
    client = connection.client
    try:
        await client.initialize()
        keys_on_every_node = [keys.thread_prefix(thread) + "burst" for thread in THREADS]
        writes = [client.set(keys_on_every_node[i % 3], i) for i in range(300)]

        async def pipelined(i: int) -> list[Any]:
            pipe = client.pipeline(transaction=False)
            for key in keys_on_every_node:
                pipe.incr(key + ":n")
            return list(await pipe.execute())

        results = await asyncio.gather(*writes, *(pipelined(i) for i in range(100)))
        assert all(results[:300])
        assert sorted(result[0] for result in results[300:]) == list(range(1, 101))
        # No node was asked for more connections than the limit and the few a subscription may borrow.
        assert max(len(node._connections) for node in client.get_nodes()) <= 4 + 8
    finally:
        await client.aclose()


async def test_the_test_threads_live_on_three_different_masters(cluster_client: Any) -> None:
    nodes = {cluster_client.get_node_from_key(keys.thread_prefix(thread)).name for thread in THREADS}
    assert len(nodes) == 3


async def test_slot_watch_catches_a_script_that_leaves_its_slot(
    cluster_client: Any, redis_cluster: RedisCluster
) -> None:
    """What makes the scenario below a proof: a script touching another slot of its own node is seen,
    although Redis runs such a legacy (shebang-less) script without complaint."""
    script = "redis.call('SET', KEYS[1] .. 'x', '1'); return redis.call('SET', ARGV[1], '1')"
    home = cluster_client.get_node_from_key("tg:{a}:")
    probes = (f"tg:{{probe{n}}}:x" for n in range(10_000))
    same_node_other_slot = next(
        key
        for key in probes
        if cluster_client.keyslot(key) != cluster_client.keyslot("tg:{a}:")
        and cluster_client.get_node_from_key(key) == home
    )
    async with SlotWatch(redis_cluster.ports).watching() as watch:
        await cluster_client.eval(script, 1, "tg:{a}:", same_node_other_slot)
    assert [run.touched for run in watch.crossing()] == [["tg:{a}:x", same_node_other_slot]]


async def test_the_cluster_client_refuses_a_multi_key_command_across_slots(cluster_client: Any) -> None:
    with pytest.raises((RedisClusterException, ResponseError)):
        await cluster_client.sunionstore("tg:{a}:dest", ["tg:{a}:s", "tg:{b}:s"])


async def test_every_script_stays_in_one_slot_and_every_store_method_runs_on_the_cluster(
    cluster_client: Any, redis_cluster: RedisCluster
) -> None:
    """The whole prompt lifecycle on three threads on three masters, watched: every script and store
    method runs, no command is refused as cross-slot, and no script touches a second slot."""
    async with SlotWatch(redis_cluster.ports).watching() as watch:
        ran, called = await run_scenario(cluster_client)
    assert ran == {*THREAD_SCRIPTS, *PLAIN_SCRIPTS}
    missing = public_coroutines(Store) - called
    assert not missing, f"store methods never run on the cluster (add them to this scenario): {missing}"
    names = {sha: name for name, sha in Scripts().shas.items()}
    assert {names.get(run.sha, run.sha) for run in watch.runs} >= ran
    assert watch.crossing() == []
    assert all(run.touched for run in watch.runs)
    plain = [run for run in watch.runs if names.get(run.sha) in PLAIN_SCRIPTS]
    assert {names[run.sha] for run in plain} == set(PLAIN_SCRIPTS)
    assert [run for run in plain if not set(run.touched) <= set(run.declared)] == []  # every key declared


async def run_scenario(cluster_client: Any) -> tuple[set[str], set[str]]:
    """Drive the core on three threads; returns the scripts run and the store methods called."""
    clock = [1_700_000_000.0]
    store = Store(cluster_client)
    stored = Recorder(store)
    ran = record_scripts(store.scripts)
    channels = [MemoryChannel(platform) for platform in ("slack", "telegram", "discord")]
    gateway = Gateway(store, Channels(list(channels)), clock=lambda: clock[0], sweep_interval=3600)
    await gateway.start()
    try:
        await store.put_agent(AgentDefinition(name="ops", human_input=HumanInput(approvers=["slack:UBOB"])))
        assert await store.is_approver("ops", "slack:UBOB")
        assert (await store.get_agent("ops")) is not None
        assert (await store.approval_policy("ops")).default.value == "always"
        for thread in THREADS:
            await drive_one_thread(gateway, store, thread, clock)
        await drive_an_escalation(gateway, store, clock)
        await drive_a_grant_and_a_session_run(gateway, store)
        await store.forget_pending("prm_gone", "ops")  # what adoption and expiry do with a settled one
        await store.watch(THREADS[0], "prm_gone", 1000)  # what an SSE stream marks (long-polls read and mark)
        assert await store.is_watched(THREADS[0], "prm_gone")
        assert await store.admit(THREADS[1], "tok", 1000)  # one REST answer admitted per thread
        assert not await store.admit(THREADS[1], "other", 1000)
        await store.release_admission(THREADS[1], "tok")
        assert await store.admit(THREADS[1], "other", 1000)
        assert (await store.count_hit("slack:UALICE", 60_000))[0] == 1
        assert (await store.count_hit("slack:UALICE", 60_000))[0] == 2
        assert (await store.queue_depths(10))[2] == 0
        await store.ping()
        await store.log_item(THREADS[0], {"role": "gateway", "type": "message", "content": []})
        await store.mark_session_thread(THREADS[0], "ops:s1")  # who may read a session's thread
        assert (await store.thread_audience(THREADS[0])).session == "ops:s1"
        assert await store.pending_ids("ops", None, 10) == ([], None)
        assert await store.pending_ids(None, None, 10) == ([], None)
        feed = await feed_entries(cluster_client, keys.EVENTS)  # every partition of the feed
        assert {row["type"] for row in feed} == {
            "input.requested",
            "input.resolved",
            "message.received",
            "input.reminded",
            "input.escalated",
            "grant.created",  # the grant made above, in its run's thread's slot
            "input.claimed",  # the claim and release above
        }
        await gateway.outbox.sweep(everything=True)
        audit = await read_history(store, HistoryQuery(agent="ops"), None, 100)  # every partition's slot
        outcomes = {record["outcome"] for record in audit.items}
        assert outcomes == {"answered", "approved", "cancelled", "expired"}
    finally:
        await gateway.stop()
    return ran, stored.called


def record_scripts(scripts: Scripts) -> set[str]:
    """Record the name of every script run through ``scripts``."""
    ran: set[str] = set()
    call_many, run_after = scripts.call_many, scripts.run_after

    async def recorded_call_many(client: Any, calls: list[tuple[str, list[str], list[Any]]]) -> list[Any]:
        ran.update(name for name, _, _ in calls)
        return await call_many(client, calls)

    async def recorded_run_after(client: Any, commands: Any, name: str, k: list[str], a: list[Any]) -> Any:
        ran.add(name)
        return await run_after(client, commands, name, k, a)

    scripts.call_many = recorded_call_many  # type: ignore[method-assign]
    scripts.run_after = recorded_run_after  # type: ignore[method-assign]
    return ran


async def drive_one_thread(gateway: Gateway, store: Store, thread: str, clock: list[float]) -> None:
    """One thread's story: every branch of every script, on whichever master the thread hashes to."""
    sender = f"{thread.split(':')[0]}:UALICE"
    run = await gateway.create_run(RunRequest(thread_id=thread, agent="ops", started_by=sender))
    assert (await store.get_run(run.run_id)) is not None

    first = await gateway.raise_prompt(run.run_id, PromptRequest.model_validate(QUESTION))
    second = await gateway.raise_prompt(run.run_id, PromptRequest.model_validate(QUESTION))  # supersedes
    assert (await gateway.get_prompt(first.prompt_id)).reason_code is ReasonCode.SUPERSEDED
    assert await store.active_prompt_id(thread) == second.prompt_id
    drafted = await gateway.save_draft(second.prompt_id, sender, second.prompt_id, {"q1": '["a"]'})
    assert await store.get_draft(thread, second.prompt_id) == drafted.values == {"q1": '["a"]'}

    stale = InboundMessage(thread_id=thread, sender=sender, text="x", prompt_id=first.prompt_id)
    assert (await gateway.receive(stale)).outcome is Outcome.STALE
    stranger = InboundMessage(thread_id=thread, sender=f"{thread.split(':')[0]}:UMALLORY", text="main")
    assert (await gateway.receive(stranger)).outcome is Outcome.NOT_ALLOWED

    waiting = asyncio.create_task(gateway.wait_prompt(second.prompt_id, 5))  # hot: the agent is waiting
    await asyncio.sleep(0.05)
    reply = InboundMessage(thread_id=thread, sender=sender, text="main", event_id=f"e-{thread}")
    assert (await gateway.receive(reply)).outcome is Outcome.ANSWERED
    assert (await waiting).answers is not None
    assert (await gateway.receive(reply)).outcome is Outcome.DUPLICATE
    assert (await gateway.answer(second.prompt_id, sender, text="main")).status is AnswerStatus.SAME

    third = await gateway.raise_prompt(run.run_id, PromptRequest.model_validate(QUESTION))
    assert (await gateway.claim(third, sender)).holder == sender  # a claim, then its release
    assert (await gateway.claim(third, sender, release=True)).holder is None
    assert (await gateway.answer(third.prompt_id, sender, text="dev")).prompt.turn_id  # parked
    fourth = await gateway.raise_prompt(run.run_id, PromptRequest.model_validate(QUESTION))
    assert (await gateway.cancel_prompt(fourth.prompt_id, "no longer needed", by=sender)).ok
    assert await store.get_prompt_field(thread, fourth.prompt_id, "cancelled_by") == sender

    fifth = await gateway.raise_prompt(
        run.run_id, PromptRequest.model_validate({**QUESTION, "expires_in_seconds": 60})
    )
    clock[0] += 61
    assert await gateway.expire_due() >= 1
    assert (await gateway.get_prompt(fifth.prompt_id)).reason_code is ReasonCode.EXPIRED

    queued = InboundMessage(thread_id=thread, sender=sender, text="next task")
    assert (await gateway.receive(queued)).outcome is Outcome.QUEUED
    await gateway.raise_prompt(run.run_id, PromptRequest.model_validate(QUESTION))
    await gateway.end_run(run.run_id)
    await gateway.post_message(thread, "done")
    await gateway.outbox.idle()
    await gateway.outbox.sweep(everything=True)
    assert await gateway.adopt() == 0
    items = await store.thread_items(thread, None, 100)
    resolved = [row for _, row in items if row.get("type") == "pending_prompt_resolved"]
    assert len(resolved) == 6  # superseded, answered hot, answered parked, cancelled, expired, run ended


async def drive_a_grant_and_a_session_run(gateway: Gateway, store: Store) -> None:
    """A session's run, an approve with a grant, the grant used and revoked: their scripts, in the slot of
    the run's thread."""
    request = RunRequest(thread_id=THREADS[2], agent="ops", started_by="slack:UALICE")
    run, created = await session_run(gateway, "ops:cluster-session", request)
    again, created_again = await session_run(gateway, "ops:cluster-session", request)
    assert (created, created_again, again.run_id) == (True, False, run.run_id)
    call = ToolCall(name="Bash", arguments={"command": "git status"})
    asked = PromptRequest(kind="approval", questions=[{"question": "Run it?"}], tool_call=call)
    prompt = await gateway.raise_prompt(run.run_id, asked)
    answered = await gateway.answer(prompt.prompt_id, "slack:UALICE", text="approve")
    assert answered.status is AnswerStatus.ANSWERED
    grant = await record_grant(
        store,
        answered.prompt,
        "slack:UALICE",
        GrantRequest(scope="run", match=exact_match(call)),
        gateway.now_ms(),
    )
    assert grant is not None
    used = await granted(store, run, call)
    assert used is not None and used.uses == 1
    assert await store.grants.revoke(run.thread_id, run.run_id, grant.grant_id) is not None
    assert await granted(store, run, call) is None


async def drive_an_escalation(gateway: Gateway, store: Store, clock: list[float]) -> None:
    """A prompt on one master reminded, then copied to a thread on another and answered there."""
    home, elsewhere = THREADS[0], THREADS[1]
    run = await gateway.create_run(RunRequest(thread_id=home, agent="ops", started_by="slack:UALICE"))
    steps = [{"after_seconds": 60, "remind": True}, {"after_seconds": 120, "to": [elsewhere]}]
    prompt = await gateway.raise_prompt(
        run.run_id, PromptRequest.model_validate({**QUESTION, "escalation": steps})
    )
    clock[0] += 121
    assert await gateway.escalate_due() == 2
    await gateway.outbox.idle()
    copy = InboundMessage(thread_id=elsewhere, sender="slack:UBOB", text="main", event_id="e-copy")
    assert (await gateway.receive(copy)).outcome is Outcome.ANSWERED
    await gateway.outbox.idle()
    await gateway.outbox.idle()
    settled = await gateway.get_prompt(prompt.prompt_id)
    assert settled.escalations is not None and settled.escalations[1].threads == [elsewhere]
    assert await store.redis.hlen(keys.mirrors(elsewhere)) == 0, "the copy is forgotten once it settled"


async def test_leases_waiters_rate_limits_webhooks_and_metrics_work_on_the_cluster(
    cluster_client: Any, redis_cluster: RedisCluster
) -> None:
    """The gateway's other Redis users, watched the same way."""
    delivered: list[bytes] = []

    def receiver(request: httpx.Request) -> httpx.Response:
        delivered.append(request.content)
        return httpx.Response(200)

    async with SlotWatch(redis_cluster.ports).watching() as watch:
        first, second = Lease(cluster_client, "slack:abc", ttl_ms=1000), Lease(cluster_client, "slack:abc")
        ran_first, ran_second = record_scripts(first.records.scripts), record_scripts(second.records.scripts)
        assert await first.try_acquire()
        assert not await second.try_acquire()
        assert await first.renew()
        await first.release()
        assert await second.try_acquire()
        assert await second.current_holder() == second.holder
        await second.release()
        assert ran_first | ran_second == {*LEASE_SCRIPTS, "release_held"}

        waiters, other = Waiters(cluster_client), connect(redis_cluster.url).client
        await waiters.start()
        try:
            with waiters.watch("prm_1") as settled:
                await other.publish(keys.SETTLED_CHANNEL, "prm_1")  # from any node, as a script would
                await asyncio.wait_for(settled.future, 5)
        finally:
            await waiters.stop()
            await other.aclose()

        limiter = RateLimiter(Store(cluster_client), limit=1, window_s=60)
        assert (await limiter.hit("slack:UALICE")).allowed
        assert not (await limiter.hit("slack:UALICE")).allowed

        dispatcher = WebhookDispatcher(
            cluster_client,
            ["http://127.0.0.1:9/hook"],
            "s3cret",
            transport=httpx.MockTransport(receiver),
            poll_s=0.05,
        )
        bodies = [f'{{"id": "evt_{part}", "type": "input.requested"}}' for part in keys.EVERY_PARTITION]
        await dispatcher.start()
        try:
            for part, body in zip(keys.EVERY_PARTITION, bodies, strict=True):  # the legacy stream too
                await cluster_client.xadd(keys.events_feed(part), {"j": body})

            async def all_delivered() -> bool:
                return len(delivered) >= len(bodies)

            await eventually(all_delivered, "every event delivered")
            await asyncio.sleep(0.2)  # time for any duplicate to show up
        finally:
            await dispatcher.stop()
        await metrics.refresh(Store(cluster_client))
    assert sorted(delivered) == sorted(body.encode() for body in bodies)
    assert len(watch.runs) >= 6
    assert watch.crossing() == []


async def test_every_webhook_queue_method_and_script_runs_in_one_slot_on_the_cluster(
    cluster_client: Any, redis_cluster: RedisCluster
) -> None:
    """The webhook queue's keys share one hash tag: its scripts and transactions never cross slots."""
    queue = WebhookQueue(cluster_client)
    recorded, ran = Recorder(queue), record_scripts(queue.scripts)
    async with SlotWatch(redis_cluster.ports).watching() as watch:
        await queue.ensure_group(start="$")
        await queue.ensure_group(start="$")  # kept when it exists
        stream = keys.events_feed(0)
        entry = str(await cluster_client.xadd(stream, {"j": '{"id": "evt_1"}'}))
        [(read_stream, read_id, fields)] = await queue.read_new("crashed", 10, None)
        assert (read_stream, read_id, fields) == (stream, entry, {"j": '{"id": "evt_1"}'})
        assert [row.entry_id for row in await queue.read_held("crashed", 10)] == [entry]
        assert fields is not None
        [(_, claimed_id, _)] = await queue.claim_stale("me", 0, 10)  # what a crashed consumer left
        assert claimed_id == entry
        deliveries = [("evt_1@a", "http://a.example/hook"), ("evt_1@b", "http://b.example/hook")]
        assert await queue.enqueue(fields["j"], deliveries, 1000, 60) == 2
        assert await queue.enqueue(fields["j"], deliveries, 1000, 60) == 0  # once per (event, URL)
        await queue.ack(stream, [entry])
        assert await queue.read_held("me", 10) == []
        await queue.leave("crashed")
        assert sorted(await queue.claim_due(1000, 30_000, 10)) == ["evt_1@a", "evt_1@b"]
        assert await queue.claim_due(2000, 30_000, 10) == []  # leased meanwhile
        assert (await queue.record("evt_1@a"))["url"] == "http://a.example/hook"
        await queue.retry_at("evt_1@a", 1, 5000)
        await queue.forget("evt_1@b")
        assert await queue.depth() == 1
        assert await queue.claim_due(5000, 30_000, 10) == ["evt_1@a"]
    assert ran == set(WEBHOOK_SCRIPTS)
    assert public_coroutines(WebhookQueue) - recorded.called == set()
    names = {sha: name for name, sha in Scripts().shas.items()}
    assert {names.get(run.sha) for run in watch.runs} == set(WEBHOOK_SCRIPTS)
    assert watch.crossing() == []
    assert [run for run in watch.runs if not set(run.touched) <= set(run.declared)] == []  # all declared


async def test_the_webhook_group_reads_event_streams_on_every_master_without_blocking(
    cluster_client: Any,
) -> None:
    """The partitions' event streams spread over the masters, so no one XREADGROUP may name them all:
    each is read on its own, and a read that finds nothing waits a short poll, not the whole block."""
    streams = [keys.events_feed(part) for part in keys.EVERY_PARTITION]
    assert len({cluster_client.get_node_from_key(stream).name for stream in streams}) == 3
    with pytest.raises((RedisClusterException, ResponseError)):
        await cluster_client.xread(dict.fromkeys(streams, "0"))
    queue = WebhookQueue(cluster_client)
    await queue.ensure_group(start="$")
    started = time.monotonic()
    assert await queue.read_new("me", 10, 5_000) == []
    assert time.monotonic() - started < 2
    ids = {stream: str(await cluster_client.xadd(stream, {"j": "{}"})) for stream in streams}
    rows = await queue.read_new("me", 10, 5_000)
    assert sorted((row.stream, row.entry_id) for row in rows) == sorted(ids.items())


async def test_the_feeds_follow_a_thread_log_on_each_master(cluster_client: Any) -> None:
    """On a cluster each followed stream gets its own reader, so no XREAD spans two slots."""
    source = StreamSource(cluster_client)
    assert source.per_stream
    recorded_source = Recorder(source)
    log_key = keys.items(THREADS[0])
    first = str(await cluster_client.xadd(log_key, {"j": '{"n": 0}'}))
    assert await source.latest((log_key, keys.events_feed(0))) == [first, "0-0"]
    [rows, none] = await source.after([(log_key, "0-0"), (keys.events_feed(0), "0-0")], 10)
    assert [row_id for row_id, _ in rows] == [first] and none == []
    reader = source.reader()
    recorded_reader = Recorder(reader)
    assert not reader.unblocks  # one stream per reader: nothing ever joins a blocked read
    assert await reader.read(lambda: {log_key: "0-0"}, 10, 100) == [(log_key, [(first, {"j": '{"n": 0}'})])]
    await reader.unblock()
    await reader.close()
    assert public_coroutines(StreamSource) - recorded_source.called == set()
    assert public_coroutines(StreamReader) - recorded_reader.called == set()

    feeds = Feeds(cluster_client)
    await feeds.start()
    try:
        for thread in THREADS:
            async with feeds.thread_log(thread) as log:
                waiting = asyncio.create_task(feeds.read(log, log.head, 10, wait_s=10))
                added = str(await cluster_client.xadd(keys.items(thread), {"j": '{"n": 1}'}))
                assert [entry.id for entry in await waiting] == [added]
        assert feeds.followed == 3  # three threads, each on its own follower (the feeds are unread)
        await feeds.head(feeds.events)
        assert feeds.followed == 4
    finally:
        await feeds.stop()
