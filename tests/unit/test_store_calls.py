"""Each script's KEYS and ARGV are laid out in one place (``gateway.store.calls``), and a thread script is
handed keys of its own thread only: one Cluster slot per call."""

from __future__ import annotations

import inspect
import re
from datetime import UTC, datetime

from redis.crc import key_slot

from gateway.base.models import Answer, Run
from gateway.rules.grants import Grant
from gateway.store import calls, keys
from gateway.store.publishing import PartitionPublish
from gateway.store.results import ClaimRequest, FeedEntry, Kept, OutboxMode, OutboxPass, ReadyAnswer, Refusal
from gateway.store.scripts import THREAD_SCRIPTS, ScriptCall, Scripts, key_tables, thread_lead

THREAD = "slack:C0456:1712345678.000100"
LEAD = thread_lead(1000, 5, "")


def _slot(key: str) -> int:
    return int(key_slot(key.encode()))


def _grant() -> Grant:
    return Grant.model_validate(
        {
            "grant_id": "grt_1",
            "run_id": "run_1",
            "prompt_id": "prm_1",
            "created_by": "slack:UALICE",
            "created_at": datetime(2025, 1, 1, tzinfo=UTC),
            "match": {"name": "Bash", "arguments": {"command": "ls"}},
        }
    )


def _thread_calls() -> list[ScriptCall]:
    answer = ReadyAnswer(
        "prm_1", [Answer(question_id="q1", question="Which?", answer=["a"])], "slack:UALICE", "turn_1"
    )
    run = Run.model_validate(
        {
            "run_id": "run_1",
            "thread_id": THREAD,
            "agent": "ops",
            "started_by": "slack:UALICE",
            "created_at": datetime(2025, 1, 1, tzinfo=UTC),
        }
    )
    return [
        calls.start_run(LEAD, run, 60_000),
        calls.end_run(LEAD, THREAD, "run_1", "done", 5, 1000, "run_ended"),
        calls.adopt_session_run(LEAD, THREAD, "ops:s1", "run_1", ""),
        calls.open_prompt(LEAD, THREAD, "prm_1", "run_1", "{}", 5, 10, 1000, "newer", "ops"),
        calls.read_prompt(LEAD, THREAD, "prm_1", 0),
        calls.resolve_prompt(LEAD, THREAD, "prm_1", [], "slack:UALICE", 5, 1000, "turn_1", None, ""),
        calls.cancel_prompt(LEAD, THREAD, "prm_1", "no", "declined", 5, 1000, audit=True, by=""),
        calls.expire_prompt(LEAD, THREAD, "prm_1", "late", 5, 1000),
        calls.save_draft(LEAD, THREAD, "prm_1", "form", 1000, {"q1": "a"}),
        *(
            calls.receive_message(LEAD, THREAD, "evt_1", 60, "", {"text": "hi"}, 500, ready, 5, 1000)
            for ready in (None, answer, Refusal("prm_1"), Kept("prm_1"))
        ),
        calls.append_item(LEAD, THREAD, 500, {"type": "message"}, ("prm_1", "m1")),
        calls.take_outbox(LEAD, OutboxPass(THREAD, "tok", 1000, OutboxMode.ACQUIRE), 500),
        calls.add_grant(LEAD, THREAD, _grant(), 100),
        calls.use_grant(LEAD, THREAD, "run_1", "grt_1"),
        calls.revoke_grant(LEAD, THREAD, "run_1", "grt_1"),
        calls.take_escalation(LEAD, THREAD, "prm_1", 0, remind=True, escalate=False),
        calls.record_copy(LEAD, THREAD, "prm_1", "c:0:slack", "telegram:1 m1"),
        calls.mirror_prompt(LEAD, THREAD, "prm_1", "telegram:1", 1000, "ops"),
        calls.claim_prompt(LEAD, THREAD, "prm_1", ClaimRequest("person:dana", "slack:UDANA", 5_000)),
    ]


def test_every_script_has_one_builder_named_after_it() -> None:
    builders = {
        name for name, member in inspect.getmembers(calls, inspect.isfunction) if not name.startswith("_")
    }
    assert set(Scripts().sources) == builders | {"publish_feed"}  # publish_feed: PartitionPublish.call


def test_a_thread_script_is_handed_its_thread_prefix_then_keys_of_that_thread_only() -> None:
    built = _thread_calls()
    assert {call.name for call in built} == set(THREAD_SCRIPTS)
    for call in built:
        assert call.keys[0] == keys.thread_prefix(THREAD), call.name
        assert {_slot(key) for key in call.keys} == {_slot(keys.thread_prefix(THREAD))}, call.name
        assert all(key.startswith(keys.thread_prefix(THREAD)) for key in call.keys), call.name
        assert call.args[:3] == LEAD, call.name


def test_the_keys_a_script_names_are_those_python_names() -> None:
    opened = calls.open_prompt(LEAD, THREAD, "prm_1", "run_1", "{}", 5, 10, 1000, "newer", "ops")
    assert opened.keys[1:] == [
        keys.prompt(THREAD, "prm_1"),
        keys.prompt_record(THREAD, "prm_1"),
        keys.run(THREAD, "run_1"),
    ]
    posted = calls.append_item(LEAD, THREAD, 500, {}, ("prm_1", "m1"))
    assert posted.keys[1:] == [keys.items(THREAD), keys.prompt(THREAD, "prm_1")] and posted.args[-1] == "m1"
    logged = calls.append_item(LEAD, THREAD, 500, {}, None)
    assert logged.keys[1:] == [keys.items(THREAD)] and len(logged.args) == len(LEAD) + 2


def test_the_webhook_queue_scripts_are_handed_every_key_they_touch_in_one_slot() -> None:
    queued = calls.enqueue_webhooks("{}", [("evt_1@a", "http://a"), ("evt_1@b", "http://b")], 5, 60)
    assert queued.keys == [
        keys.WEBHOOK_DUE,
        keys.webhook_seen("evt_1@a"),
        keys.webhook_delivery("evt_1@a"),
        keys.webhook_seen("evt_1@b"),
        keys.webhook_delivery("evt_1@b"),
    ]
    assert queued.args == [5, 60, "{}", "evt_1@a", "http://a", "evt_1@b", "http://b"]
    assert len({_slot(key) for key in [*queued.keys, *calls.claim_webhooks(5, 1000, 10).keys]}) == 1


def test_a_publish_names_its_streams_markers_and_indexes_in_keys() -> None:
    group = PartitionPublish({keys.events_feed(3): [FeedEntry(keys.events_feed(3), "evt_1", "{}")]})
    call = group.call(lambda stream: 10, 60)
    assert call.name == "publish_feed"
    assert call.keys == [keys.events_feed(3), keys.feed_seen(keys.events_feed(3), "evt_1")]


def test_an_acknowledgement_on_one_server_names_the_feeds_of_the_events_it_appends_in_keys() -> None:
    events, history = keys.events_feed(3), keys.history_feed(3)
    entries = [FeedEntry(events, "e1", "{1}"), FeedEntry(history, "h1", "{2}")]
    entries.append(FeedEntry(events, "e2", "{3}"))
    one = OutboxPass(THREAD, "tok", 1000, OutboxMode.CONTINUE, 2, 0, ["{log}"], entries=entries)
    call = calls.take_outbox(LEAD, one, 500, lambda stream: 7)
    assert call.keys == [keys.thread_prefix(THREAD), events, history]
    appended = [2, 7, "{1}", 3, 7, "{2}", 2, 7, "{3}"]  # each event: its feed's place in KEYS, cap, JSON
    assert call.args[len(LEAD) :] == ["tok", 1000, "continue", 2, 0, 100, 500, 1, "{log}", *appended]
    assert calls.take_outbox(LEAD, one, 500).keys == [keys.thread_prefix(THREAD)]  # a cluster's: none


def spelled_keys(source: str) -> list[str]:
    """Key names a Lua source spells itself: a literal after the thread prefix, or a global ``tg:`` name
    (comments and the tables scripts.py writes aside)."""
    code = [line.split("--", 1)[0] for line in source.splitlines()]
    written = ("local K = ", "local ID = ", "local SETTLED = ")
    return [
        found for line in code if not line.startswith(written) for found in re.findall(r"P \.\. '|'tg:", line)
    ]


def test_no_key_name_is_spelled_in_a_lua_script() -> None:
    """A thread's key names come from ``keys``: handed in KEYS, or in the tables scripts.py writes into
    ``_lib.lua``."""
    assert {
        name: found for name, source in Scripts().sources.items() if (found := spelled_keys(source))
    } == {}
    assert spelled_keys("local lock = P .. 'lock'\nredis.call('PUBLISH', 'tg:settled', 'x')") == [
        "P .. '",
        "'tg:",
    ]


def test_the_lua_key_tables_name_the_keys_python_names() -> None:
    lua = key_tables()
    for name, suffix in keys.THREAD_KEYS.items():
        assert f"{name} = P .. '{suffix}'" in lua
    assert keys.active(THREAD) == keys.thread_prefix(THREAD) + keys.THREAD_KEYS["active"]
    assert keys.prompt(THREAD, "prm_1") == keys.thread_prefix(THREAD) + keys.ID_KEYS["prompt"] + "prm_1"
    assert f"prompt = '{keys.ID_KEYS['prompt']}'" in lua


def test_a_receive_says_what_was_decided_and_whether_against_a_guess_or_the_prompt_handed_back() -> None:
    def tail(ready: Kept | Refusal | None) -> list[object]:
        built = calls.receive_message(LEAD, THREAD, "evt_1", 60, "", {"text": "hi"}, 500, ready, 5, 1000)
        return built.args[len(LEAD) + 5 :]

    assert tail(None) == []
    assert tail(Kept("prm_1")) == ["keep", "prm_1", "guess"]
    assert tail(Kept("prm_1", decided=True)) == ["keep", "prm_1", "handed"]
    assert tail(Refusal("prm_1")) == ["refuse", "prm_1", "guess"]
    assert tail(Refusal("prm_1", decided=True)) == ["refuse", "prm_1", "handed"]
