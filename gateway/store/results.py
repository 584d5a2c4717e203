"""What the store's scripts answer, as types: statuses are enums, outcomes frozen dataclasses."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from gateway.base.models import Answer, Prompt, ReasonCode, Resolution
from gateway.rules.verdicts import Verdict


class OpenStatus(StrEnum):
    """What opening a prompt did: opened it, or found no run, or an ended one."""

    OK = "ok"
    NO_RUN = "no_run"
    RUN_ENDED = "run_ended"


class SettlementStatus(StrEnum):
    """What a resolve, cancel or expire call did."""

    OK = "ok"  # this call settled it
    SETTLED = "settled"  # an earlier one did
    MISSING = "missing"  # no such prompt
    NOT_DUE = "not_due"  # expire only: its expiry has not passed
    VOTED = "voted"  # an approval short of the approvers needed: recorded, the prompt still pending
    ALREADY_VOTED = "already_voted"  # this person's vote was recorded before: nothing changed
    CLAIMED = "claimed"  # another person holds the prompt's claim: nothing changed


class DecisionStatus(StrEnum):
    """What the thread made of an inbound message (see ``Decision``)."""

    DUPLICATE = "duplicate"
    STALE = "stale"
    ACTIVE = "active"
    ANSWERED = "answered"
    CANCELLED = "cancelled"
    KEPT = "kept"
    QUEUED = "queued"
    REFUSED = "refused"
    SETTLED = "settled"
    MISSING = "missing"
    VOTED = "voted"
    ALREADY_VOTED = "already_voted"
    MIRROR = "mirror"  # it is for a copy of another thread's prompt: that thread decides
    CLAIMED = "claimed"  # another person holds the prompt's claim: logged, nothing answered


class OutboxMode(StrEnum):
    """What an outbox pass does with the thread's lock after acknowledging the last one."""

    ACQUIRE = "acquire"  # lock it if free, then take a batch
    CONTINUE = "continue"  # we hold it: take the next batch
    RELEASE = "release"  # give it up
    RENEW = "renew"  # only extend a lock still ours


@dataclass(frozen=True, slots=True)
class Settlement:
    """What a resolve, cancel or expire call did; on ``settled``, ``prompt`` says how."""

    status: SettlementStatus
    prompt: Prompt | None = None
    resolution: Resolution | None = None
    held: HeldOutbox | None = None  # the outbox's lock and first batch, taken under the caller's claim

    @property
    def ok(self) -> bool:
        return self.status is SettlementStatus.OK


@dataclass(frozen=True, slots=True)
class Decision:
    """What the thread made of an inbound message: ``duplicate``, ``stale`` (a control for a prompt that
    is no longer active), ``active`` (it answers ``prompt``; nothing is recorded until the caller decides),
    ``answered`` (the answer settled the active prompt, with ``resolution``), ``cancelled`` (the reply
    cancelled it instead: a new message superseding it, queued too, or a decline), ``kept`` (logged, the
    prompt left pending), ``queued`` for the agent, ``refused`` (the sender may not answer), or, for a
    decided answer whose prompt settled meanwhile, ``settled`` (``prompt`` says how) or ``missing``; or
    ``mirror``: nothing was done here, the message is for a copy of another thread's prompt (``mirror``:
    that thread and the prompt id)."""

    status: DecisionStatus
    prompt: Prompt | None = None
    resolution: Resolution | None = None
    mirror: tuple[str, str] | None = None
    held: HeldOutbox | None = None  # on ``answered``: the outbox's lock and first batch, as claimed


@dataclass(frozen=True, slots=True)
class ClaimRequest:
    """Claim a prompt for ``who`` (``person:<id>``, or an identity that is nobody's) until ``until_ms``, or
    ``release`` it. ``alt``: the claimant's identity when ``who`` is their person; ``force``: an operator's
    release of another's claim; ``notice``: what the thread is told of a new holder ('' nothing)."""

    who: str
    alt: str = ""
    until_ms: int = 0
    release: bool = False
    force: bool = False
    notice: str = ""


@dataclass(frozen=True, slots=True)
class Claimed:
    """What a claim or release did: ``status`` ok (``holder`` holds it now, None once released),
    ``claimed`` (``holder`` holds it, not the caller), settled (``prompt`` says how) or missing; ``changed``:
    the holder changed (the event went out)."""

    status: SettlementStatus
    holder: str | None = None
    until_ms: int | None = None
    changed: bool = False
    prompt: Prompt | None = None


@dataclass(frozen=True, slots=True)
class ReadyAnswer:
    """A reply mapped against a prompt. A guess (the prompt the caller believes is active) is settled only
    if that prompt is active; a ``decided`` one answers the prompt a first receive call handed back."""

    prompt_id: str
    answers: list[Answer]
    answered_by: str
    turn_id: str
    decided: bool = False
    content: dict[str, Any] | None = None  # a form's typed values
    # Set when the reply cancels the prompt instead (seed 002): new_message (it supersedes the prompt and
    # is queued as the next turn's message) or declined; with the reason recorded.
    cancel_code: ReasonCode | None = None
    cancel_reason: str = ""
    # An approval's decision beyond its answers (note, call allowed, vote): see ``gateway.rules.verdicts``.
    verdict: Verdict = field(default_factory=Verdict)

    @property
    def opts(self) -> str:
        return self.verdict.opts()

    # The reply also asks for the same call to be let through for the rest of the run: the caller records
    # that grant once the answer settled the prompt (the scripts do not read it).
    grant: bool = False
    # Why a grant the reply asked for is not made though its approve is (told once the answer settled).
    no_grant: str = ""


@dataclass(frozen=True, slots=True)
class Refusal:
    """The sender may not answer the prompt: log the message, mark the event seen. A guess (the prompt the
    caller believes is active) is applied only if that prompt is active; a ``decided`` one refuses the
    prompt a first receive call handed back."""

    prompt_id: str
    decided: bool = False


@dataclass(frozen=True, slots=True)
class Kept:
    """The reply leaves the prompt pending (a form's step, a value not taken): log it, mark the event seen.
    A guess is applied only if that prompt is still the active one; a ``decided`` one is applied to the
    prompt a first receive call handed back."""

    prompt_id: str
    decided: bool = False


@dataclass(frozen=True, slots=True)
class OutboxBatch:
    """One pass over a thread's outbox, taken under its lock: the head of each list, decoded, and the
    fields of every prompt they name. ``None`` from ``take_outboxes`` means the lock is not ours."""

    pub: list[dict[str, Any]]
    chat: list[dict[str, Any]]
    prompts: dict[str, dict[str, str]]

    @property
    def empty(self) -> bool:
        return not self.pub and not self.chat


@dataclass(frozen=True, slots=True)
class OutboxClaim:
    """Asks the script that settles a prompt to take its thread's outbox lock for ``token`` in the same step,
    if it is free, and hand back the first batch (``size`` of each list): one step fewer per answer."""

    token: str
    ttl_ms: int
    size: int

    @property
    def arg(self) -> str:
        return f"{self.token} {self.ttl_ms} {self.size}"


@dataclass(frozen=True, slots=True)
class HeldOutbox:
    """A thread's outbox lock, taken for ``token`` by the script that settled its prompt, and the first
    batch it took under it: the caller drains from there (``Outbox.kick``)."""

    token: str
    batch: OutboxBatch


@dataclass(frozen=True, slots=True)
class OutboxPass:
    """One step of draining a thread's outbox under its lock ``token``: acknowledge ``pub_done`` events and
    ``chat_done`` posts of the last pass (logging ``logged``, JSON entries of the posted items; appending
    ``entries``, the feed entries those events make), then, by ``mode``, take the next ``size`` of each
    list, release the lock or renew it."""

    thread_id: str
    token: str
    ttl_ms: int
    mode: OutboxMode
    pub_done: int = 0
    chat_done: int = 0
    logged: list[str] = field(default_factory=list)
    size: int = 100
    entries: list[FeedEntry] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class FeedEntry:
    """One entry for a feed: the stream, its stable id (appended once by it), and its JSON."""

    stream: str
    event_id: str
    json: str
