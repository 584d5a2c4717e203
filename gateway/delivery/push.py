"""Web Push to signed-in people's browsers (contract §11): one notification for each prompt a person may
answer and each escalation that names them, its tap opening that prompt in the inbox.

Events reach it through the webhook queue (a target named ``push:`` beside the URLs), so each event is
taken by one gateway process, survives restarts, and is retried with backoff. A notification carries the
agent, what kind of question it is, the tool's name and the question's first words, never the tool's input
or anything secret. Sending uses ``pywebpush`` (VAPID and the payload's encryption) in a thread, off the
event loop; a subscription the push service calls gone (404, 410) is dropped.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from gateway.base.logs import event
from gateway.base.models import names_people
from gateway.base.settings import Settings
from gateway.delivery.webhooks import LocalTarget
from gateway.store import Store

TARGET = "push:"  # its name among the webhook queue's targets
EVENT_TYPES = frozenset({"input.requested", "input.escalated"})
TTL_S = 3600  # how long a push service keeps a notification for a browser that is away
SUMMARY_CHARS = 120

# The push services browsers subscribe with (Chrome and Edge's FCM, Firefox's autopush, Safari's, Windows'):
# a subscription may name an endpoint under one of these only, so a signed-in person cannot make the gateway
# POST to an address of their choosing (an internal service, say). THREADGATE_PUSH_HOSTS adds more.
PUSH_SERVICES = (
    "fcm.googleapis.com",
    "android.googleapis.com",
    "push.services.mozilla.com",
    "push.apple.com",
    "notify.windows.com",
)


def push_hosts(settings: Settings) -> frozenset[str]:
    """The extra push-service hosts ``THREADGATE_PUSH_HOSTS`` names (lower case)."""
    raw = settings.threadgate_push_hosts or ""
    return frozenset(host.strip().lower() for host in raw.split(",") if host.strip())


def endpoint_problem(endpoint: str, extra: frozenset[str] = frozenset()) -> str | None:
    """Why a subscription's endpoint is not taken (None: it is): an https URL of a known push service, or
    any URL of a host ``THREADGATE_PUSH_HOSTS`` names."""
    parts = urlsplit(endpoint)
    host = (parts.hostname or "").lower()
    if host in extra and parts.scheme in ("http", "https"):
        return None
    if parts.scheme != "https":
        return "a push endpoint is an https URL"
    if not any(host == known or host.endswith("." + known) for known in PUSH_SERVICES):
        return (
            f"{host or 'that host'} is not a browser push service this gateway sends to "
            "(an operator can add it with THREADGATE_PUSH_HOSTS)"
        )
    return None


# (subscription, payload, private key, subject) -> HTTP status the push service answered
Send = Callable[[dict[str, Any], bytes, str, str], int]


def send_with_pywebpush(subscription: dict[str, Any], payload: bytes, private_key: str, subject: str) -> int:
    """One notification through ``pywebpush`` (blocking: run it in a thread); the push service's status."""
    from pywebpush import WebPushException, webpush

    try:
        response = webpush(
            subscription_info=subscription,
            data=payload,
            vapid_private_key=private_key,
            vapid_claims={"sub": subject},
            ttl=TTL_S,
            timeout=10,
        )
    except WebPushException as exc:
        if exc.response is not None:
            return int(exc.response.status_code)
        raise
    return int(getattr(response, "status_code", 201))


def summary(data: dict[str, Any]) -> str:
    """What a notification says of a prompt: the tool's name for an approval, else the first question's
    first words (never the tool's input)."""
    call = data.get("tool_call")
    if isinstance(call, dict) and call.get("name"):
        return f"Approve {call['name']}?"[:SUMMARY_CHARS]
    questions = data.get("questions") or []
    text = questions[0].get("question", "") if questions and isinstance(questions[0], dict) else ""
    text = " ".join(str(text or data.get("message") or "An answer is needed.").split())
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1] + "…"


class PushSender:
    """Who to tell of an event, and the telling."""

    def __init__(
        self,
        store: Store,
        private_key: str,
        subject: str,
        *,
        hosts: frozenset[str] = frozenset(),
        send: Send = send_with_pywebpush,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.store = store
        self._private_key = private_key
        self.subject = subject
        self._send = send
        self._clock = clock
        self.hosts = hosts

    def wants(self, kind: str | None) -> bool:
        """Whether an event of ``kind`` may notify anyone: a prompt raised, or an escalation step."""
        return kind in EVENT_TYPES

    async def deliver(self, body: bytes, ident: str) -> str | None:
        """Notify everyone the event concerns; None when done, else what failed (the event is retried:
        a browser already told shows the repeat in place of the first, by its tag)."""
        try:
            entry = json.loads(body)
            data = entry["data"]
            kind = entry["type"]
        except (ValueError, KeyError, TypeError):
            return None  # nothing to tell anyone
        people = await self.recipients(kind, data)
        payload = self.payload(kind, data)
        failures = 0
        for person in people:
            for subscription in await self.store.push.of(person):
                failures += not await self._notify(person, subscription, payload)
        return f"{failures} notification(s) failed" if failures else None

    async def _notify(self, person: str, subscription: dict[str, Any], payload: bytes) -> bool:
        endpoint = str(subscription.get("endpoint", ""))
        if endpoint_problem(endpoint, self.hosts) is not None:  # kept before THREADGATE_PUSH_HOSTS changed
            await self.store.push.remove(person, endpoint)
            event(
                "push.subscription_dropped", person=person, reason="not a push service this gateway sends to"
            )
            return True
        try:
            status = await asyncio.to_thread(
                self._send, subscription, payload, self._private_key, self.subject
            )
        except Exception as exc:  # a push service away: retried with the event
            event("push.failed", logging.WARNING, person=person, error=type(exc).__name__)
            return False
        if status in (404, 410):
            await self.store.push.remove(person, endpoint)
            event("push.subscription_dropped", person=person, status=status)
            return True
        if status >= 400:
            event("push.refused", logging.WARNING, person=person, status=status)
            return status < 500  # a refusal of this one notification is not retried
        event("push.sent", logging.DEBUG, person=person)
        return True

    def payload(self, kind: str, data: dict[str, Any]) -> bytes:
        prompt_id = str(data.get("prompt_id", ""))
        title = f"{data.get('agent', 'An agent')} {'escalated' if kind == 'input.escalated' else 'asks'}"
        body = {
            "title": title,
            "body": summary(data),
            "tag": prompt_id,
            "url": f"/inbox#prompt={prompt_id}",
            "prompt_id": prompt_id,
        }
        return json.dumps(body, ensure_ascii=False).encode()

    async def recipients(self, kind: str, data: dict[str, Any]) -> list[str]:
        """The people (bare ids) an event concerns: for a raised prompt, whoever may answer it (its run's
        starter and its agent's approvers, as people); for an escalation, the people its step names."""
        if kind == "input.escalated":
            steps = data.get("escalation") or []
            index = data.get("step")
            named = steps[index].get("to", []) if isinstance(index, int) and 0 <= index < len(steps) else []
        else:
            definition = await self.store.get_agent(str(data.get("agent", "")))
            named = list(definition.human_input.approvers) if definition is not None else []
            if data.get("started_by"):
                named.insert(0, str(data["started_by"]))
        return await self._people(named)

    async def _people(self, named: list[str]) -> list[str]:
        """The person ids ``named`` stands for: people and groups as ``PeopleStore.named`` reads them, and
        the person behind each listed platform identity."""
        people = self.store.people
        at = datetime.fromtimestamp(self._clock(), UTC) if self._clock else datetime.now(UTC)
        found = [person.person for person in await people.named(named, at)]
        for name in named:
            if not names_people(name) and (who := await people.whois(name)) is not None:
                found.append(who.person)
        return list(dict.fromkeys(found))


def push_targets(settings: Settings, store: Store) -> dict[str, LocalTarget]:
    """The webhook queue's ``push:`` target when VAPID keys are set (none otherwise). Raises ValueError
    with the install line when ``pywebpush`` is missing."""
    key = settings.threadgate_vapid_private_key
    if key is None or not settings.threadgate_vapid_subject:
        return {}
    try:
        import pywebpush  # noqa: F401
    except ImportError:
        raise ValueError(
            "THREADGATE_VAPID_PRIVATE_KEY is set but Web Push is not installed: "
            "pip install 'threadgate[push]'"
        ) from None
    sender = PushSender(
        store, key.get_secret_value(), settings.threadgate_vapid_subject, hosts=push_hosts(settings)
    )
    return {TARGET: sender}
