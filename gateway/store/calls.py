"""Each Lua script's KEYS and ARGV, built from named values in one function per script.

A script's header comment lists what it takes; the function of the same name here is the only place that
lays those out, so a call site names its values and never counts positions. Every key a script can know
before it runs is declared in KEYS, named by ``gateway.store.keys`` (a thread script's KEYS[1] is still its
thread's prefix, from which ``_lib.lua`` names the keys it finds while running: the active prompt's, a
prompt an outbox entry names). ``lead`` is ``thread_lead(...)``: what every thread script starts with.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gateway.base import jsontext
from gateway.base.models import Answer, Run
from gateway.rules.grants import Grant
from gateway.store import keys
from gateway.store.results import ClaimRequest, Kept, OutboxPass, ReadyAnswer, Refusal
from gateway.store.scripts import ScriptCall

Lead = list[int | str]


def _thread(name: str, thread_id: str, own: list[str], lead: Lead, args: list[Any]) -> ScriptCall:
    """A thread script's call: its thread's prefix, then its own keys; the lead, then its own arguments."""
    return ScriptCall(name, [keys.thread_prefix(thread_id), *own], [*lead, *args])


def _json(value: Any) -> str:
    return jsontext.dumps(value)


def _content(content: dict[str, Any] | None) -> str:
    return "" if content is None else _json(content)


def _answers(answers: list[Answer]) -> str:
    return _json([answer.model_dump(mode="json") for answer in answers])


# Runs -----------------------------------------------------------------------------------------------


def start_run(lead: Lead, run: Run, keep_ms: int) -> ScriptCall:
    args = [run.model_dump_json(), keep_ms, run.agent, run.started_by or ""]
    return _thread("start_run", run.thread_id, [keys.run(run.thread_id, run.run_id)], lead, args)


def end_run(
    lead: Lead, thread_id: str, run_id: str, reason: str, now_ms: int, retain_ms: int, code: str
) -> ScriptCall:
    own = [keys.run(thread_id, run_id), keys.grants(thread_id, run_id)]
    return _thread("end_run", thread_id, own, lead, [run_id, reason, now_ms, retain_ms, code])


def adopt_session_run(lead: Lead, thread_id: str, session_key: str, run_id: str, stale: str) -> ScriptCall:
    own = [keys.session_run(thread_id, session_key)]
    return _thread("adopt_session_run", thread_id, own, lead, [run_id, stale])


# Prompts --------------------------------------------------------------------------------------------


def open_prompt(
    lead: Lead,
    thread_id: str,
    prompt_id: str,
    run_id: str,
    record: str,
    now_ms: int,
    expires_ms: int,
    retain_ms: int,
    supersede_reason: str,
    agent: str,
) -> ScriptCall:
    own = [
        keys.prompt(thread_id, prompt_id),
        keys.prompt_record(thread_id, prompt_id),
        keys.run(thread_id, run_id),
    ]
    args = [prompt_id, run_id, record, now_ms, expires_ms, retain_ms, supersede_reason, agent]
    return _thread("open_prompt", thread_id, own, lead, args)


def read_prompt(lead: Lead, thread_id: str, prompt_id: str, watch_ms: int) -> ScriptCall:
    own = [keys.prompt(thread_id, prompt_id), keys.watch(thread_id, prompt_id)]
    return _thread("read_prompt", thread_id, own, lead, [prompt_id, watch_ms])


def resolve_prompt(
    lead: Lead,
    thread_id: str,
    prompt_id: str,
    answers: list[Answer],
    answered_by: str,
    now_ms: int,
    retain_ms: int,
    turn_id: str,
    content: dict[str, Any] | None,
    opts: str,
) -> ScriptCall:
    args = [prompt_id, _answers(answers), answered_by, now_ms, retain_ms, turn_id, _content(content), opts]
    return _thread("resolve_prompt", thread_id, [], lead, args)


def cancel_prompt(
    lead: Lead,
    thread_id: str,
    prompt_id: str,
    reason: str,
    code: str,
    now_ms: int,
    retain_ms: int,
    *,
    audit: bool,
    by: str,
    opts: str = "",
) -> ScriptCall:
    args = [prompt_id, reason, code, now_ms, retain_ms, "1" if audit else "0", by, opts]
    return _thread("cancel_prompt", thread_id, [], lead, args)


def claim_prompt(lead: Lead, thread_id: str, prompt_id: str, hold: ClaimRequest) -> ScriptCall:
    args = [prompt_id, "release" if hold.release else "claim", hold.who, hold.alt, hold.until_ms]
    args += ["1" if hold.force else "0", hold.notice]
    return _thread("claim_prompt", thread_id, [keys.prompt(thread_id, prompt_id)], lead, args)


def expire_prompt(
    lead: Lead, thread_id: str, prompt_id: str, reason: str, now_ms: int, retain_ms: int
) -> ScriptCall:
    return _thread("expire_prompt", thread_id, [], lead, [prompt_id, reason, now_ms, retain_ms])


def save_draft(
    lead: Lead, thread_id: str, prompt_id: str, name: str, ttl_ms: int, values: dict[str, str]
) -> ScriptCall:
    own = [
        keys.prompt(thread_id, prompt_id),
        keys.draft(thread_id, name),
        keys.prompt_drafts(thread_id, prompt_id),
    ]
    pairs = [part for field_value in values.items() for part in field_value]
    return _thread("save_draft", thread_id, own, lead, [name, ttl_ms, *pairs])


# A thread's messages, log and outbox ------------------------------------------------------------------


def receive_message(
    lead: Lead,
    thread_id: str,
    event_id: str,
    dedupe_ttl_s: int,
    hint: str,
    message: dict[str, Any],
    items_maxlen: int,
    ready: ReadyAnswer | Refusal | Kept | None,
    now_ms: int,
    retain_ms: int,
) -> ScriptCall:
    own = [keys.seen(thread_id, event_id), keys.mirrors(thread_id), keys.mirror(thread_id)]
    args: list[Any] = [event_id, dedupe_ttl_s, hint, _json(message), items_maxlen]
    if ready is not None:
        mode = "refuse" if isinstance(ready, Refusal) else "keep" if isinstance(ready, Kept) else "answer"
        args += [mode, ready.prompt_id, "handed" if ready.decided else "guess"]
    if isinstance(ready, ReadyAnswer):
        code = ready.cancel_code.value if ready.cancel_code is not None else ""
        args += [_answers(ready.answers), ready.answered_by, now_ms, retain_ms]
        args += [ready.turn_id, _content(ready.content), code, ready.cancel_reason, ready.opts]
    return _thread("receive_message", thread_id, own, lead, args)


def append_item(
    lead: Lead, thread_id: str, items_maxlen: int, entry: dict[str, Any], posted: tuple[str, str] | None
) -> ScriptCall:
    """``posted``: (prompt id, message id), where the entry is a prompt's post."""
    own = [keys.items(thread_id)]
    args: list[Any] = [items_maxlen, _json(entry)]
    if posted is not None:
        own.append(keys.prompt(thread_id, posted[0]))
        args.append(posted[1])
    return _thread("append_item", thread_id, own, lead, args)


def take_outbox(
    lead: Lead, one: OutboxPass, items_maxlen: int, caps: Callable[[str], int] | None = None
) -> ScriptCall:
    """``caps`` (a feed's length cap), on one server: the pass's events are appended in the same call."""
    args = [one.token, one.ttl_ms, one.mode, one.pub_done, one.chat_done, one.size, items_maxlen]
    args += [len(one.logged), *one.logged]
    feeds: dict[str, int] = {}
    if caps is not None:
        for entry in one.entries:
            args += [feeds.setdefault(entry.stream, len(feeds) + 2), caps(entry.stream), entry.json]
    return _thread("take_outbox", one.thread_id, list(feeds), lead, args)


# Grants and escalation --------------------------------------------------------------------------------


def add_grant(lead: Lead, thread_id: str, grant: Grant, max_per_run: int) -> ScriptCall:
    own = [
        keys.run(thread_id, grant.run_id),
        keys.prompt(thread_id, grant.prompt_id),
        keys.grants(thread_id, grant.run_id),
    ]
    record = grant.model_dump_json(exclude={"uses"})
    args = [grant.run_id, grant.grant_id, record, grant.created_by, max_per_run]
    return _thread("add_grant", thread_id, own, lead, args)


def use_grant(lead: Lead, thread_id: str, run_id: str, grant_id: str) -> ScriptCall:
    own = [keys.grants(thread_id, run_id), keys.run(thread_id, run_id)]
    return _thread("use_grant", thread_id, own, lead, [grant_id])


def revoke_grant(lead: Lead, thread_id: str, run_id: str, grant_id: str) -> ScriptCall:
    return _thread("revoke_grant", thread_id, [keys.grants(thread_id, run_id)], lead, [grant_id])


def take_escalation(
    lead: Lead, thread_id: str, prompt_id: str, step: int, *, remind: bool, escalate: bool
) -> ScriptCall:
    own = [keys.prompt(thread_id, prompt_id), keys.escalation(thread_id, prompt_id)]
    args = [prompt_id, step, "1" if remind else "0", "1" if escalate else "0"]
    return _thread("take_escalation", thread_id, own, lead, args)


def record_copy(lead: Lead, thread_id: str, prompt_id: str, field: str, value: str) -> ScriptCall:
    own = [keys.prompt(thread_id, prompt_id), keys.escalation(thread_id, prompt_id)]
    return _thread("record_copy", thread_id, own, lead, [field, value])


def mirror_prompt(
    lead: Lead, thread_id: str, prompt_id: str, origin: str, keep_ms: int, agent: str
) -> ScriptCall:
    """``origin`` '' forgets the copy of ``prompt_id`` instead."""
    own = [keys.mirrors(thread_id), keys.mirror(thread_id)]
    return _thread("mirror_prompt", thread_id, own, lead, [prompt_id, origin, keep_ms, agent])


def claim_escalations(part: int, now_ms: int, lease_ms: int, limit: int) -> ScriptCall:
    return ScriptCall("claim_escalations", [keys.escalation_schedule(part)], [now_ms, lease_ms, limit])


# Indexes, holds and counters ------------------------------------------------------------------------


def drop_dirty(dirty_set: str, thread_id: str, cutoff_ms: int) -> ScriptCall:
    return ScriptCall("drop_dirty", [dirty_set], [thread_id, cutoff_ms])


def page_index(index: str, score: int | str, member: str, count: int) -> ScriptCall:
    """``score`` '' pages from the top."""
    return ScriptCall("page_index", [index], [score, member, count])


def release_held(key: str, token: str) -> ScriptCall:
    return ScriptCall("release_held", [key], [token])


def count_hit(name: str, window_ms: int) -> ScriptCall:
    return ScriptCall("count_hit", [keys.rate_window(name)], [window_ms])


def take_lease(name: str, holder: str, ttl_ms: int) -> ScriptCall:
    return ScriptCall("take_lease", [keys.lease(name)], [holder, ttl_ms])


def renew_lease(name: str, holder: str, ttl_ms: int) -> ScriptCall:
    return ScriptCall("renew_lease", [keys.lease(name)], [holder, ttl_ms])


# The webhook queue ----------------------------------------------------------------------------------


def enqueue_webhooks(body: str, deliveries: list[tuple[str, str]], now_ms: int, ttl_s: int) -> ScriptCall:
    """``deliveries``: (delivery id, URL) pairs."""
    marks = [
        key for ident, _ in deliveries for key in (keys.webhook_seen(ident), keys.webhook_delivery(ident))
    ]
    args = [now_ms, ttl_s, body, *(part for delivery in deliveries for part in delivery)]
    return ScriptCall("enqueue_webhooks", [keys.WEBHOOK_DUE, *marks], args)


def claim_webhooks(now_ms: int, lease_ms: int, count: int) -> ScriptCall:
    return ScriptCall("claim_webhooks", [keys.WEBHOOK_DUE], [now_ms, lease_ms, count])


# The directory of people: every key in the one slot of ``keys.PEOPLE_PREFIX``.


def _person_keys(person: str) -> list[str]:
    return [keys.PEOPLE_ALL, keys.PEOPLE_INDEX, keys.person_identities(person), keys.person(person)]


def put_person(person: str, record: str, identities: list[str]) -> ScriptCall:
    return ScriptCall("put_person", _person_keys(person), [person, record, *identities])


def remove_person(person: str) -> ScriptCall:
    return ScriptCall("remove_person", _person_keys(person), [person])


def link_identity(person: str, identity: str, *, unlink: bool) -> ScriptCall:
    return ScriptCall(
        "link_identity", _person_keys(person)[:3], ["unlink" if unlink else "link", person, identity]
    )


def new_link_code(person: str, code: str, ttl_ms: int, most: int, window_ms: int) -> ScriptCall:
    return ScriptCall(
        "new_link_code",
        [keys.PEOPLE_ALL, keys.link_codes_window(person), keys.link_code(code)],
        [person, ttl_ms, most, window_ms],
    )


def use_link_code(code: str, identity: str, exposed: bool) -> ScriptCall:
    return ScriptCall(
        "use_link_code",
        [keys.link_code(code), keys.PEOPLE_ALL, keys.PEOPLE_INDEX],
        [identity, keys.person_identities(""), "1" if exposed else "0"],
    )
