"""The audit history: one bounded record per settled prompt, written once as it settles, read in pages.

A record is the settled prompt as the API serves it, plus its ``outcome``, who settled it (``by``), every
vote, the grants used and the escalations taken. The outbox appends it to its thread's partition of the
history (``keys.history_feed``) in the step that publishes ``input.resolved``, each prompt once
(``publish_feed.lua``); the streams keep records for ``THREADGATE_HISTORY_DAYS``. Reading merges the
partitions (and the one stream of earlier versions, ``tg:history``) between ``since`` and ``until`` by
stream id, reading each in batches, filters in Python, and stops after ``SCAN_BUDGET`` entries with a
cursor that says where it stands in each partition.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from gateway.base import jsontext
from gateway.base.cursors import LAST_STREAM_ID, U64, history_vector_cursor, position
from gateway.base.models import (
    APPROVE,
    DENY,
    Prompt,
    PromptKind,
    PromptState,
    ReasonCode,
    Run,
    ToolCall,
    to_ms,
)
from gateway.rules.grants import Grant
from gateway.store import FeedEntry, Store, keys

MAX_TEXT = 4_000  # characters kept of any one text in a record (an answer, a note, an argument)
MAX_ITEMS = 200  # entries kept of any one list or object (a tool call's arguments)
MAX_DEPTH = 12  # nesting kept (a tool call's arguments)
MAX_RECORD_BYTES = 32_768  # a record's JSON at most, whatever the prompt held
SHORT_TEXT = 200  # what a text is cut to when a record is still too large after the rest
# What a record too large gives up first, in order: schemas, the call's arguments, a form's values.
BULKY: tuple[tuple[str, ...], ...] = (
    ("requested_schema",),
    ("input_schema",),
    ("tool_call", "arguments"),
    ("approved_call", "arguments"),
    ("content",),
)
CUT = "…[cut: {} more characters]"
LISTS = ("votes", "grants_used", "escalations")

SCAN_BUDGET = 1_000  # stream entries one request reads at most, whatever its filters keep
SCAN_PAGE = 200  # entries per Redis read of one partition, at most
MIN_READ = 16  # entries per Redis read of one partition, at least (near the budget's end too)
UNTOUCHED = "0-0"  # a partition's position before a reader took anything from it (no entry has this id)
LATE_MS = 3_600_000  # a record written longer than this after its prompt settled counts as settled then


class HistoryOutcome(StrEnum):
    """How a prompt settled, as the history files it."""

    ANSWERED = "answered"  # a question, text, form or URL step answered
    APPROVED = "approved"  # an approval answered ["Approve"]
    DENIED = "denied"  # an approval answered ["Deny"] (a deny, a decline, any reply that is not approve)
    CANCELLED = "cancelled"  # cancelled for any reason but expiry (run ended, superseded, declined, …)
    EXPIRED = "expired"  # nobody answered before its expiry


def outcome_of(prompt: Prompt) -> HistoryOutcome:
    if prompt.prompt_state is PromptState.CANCELLED:
        expired = prompt.reason_code is ReasonCode.EXPIRED
        return HistoryOutcome.EXPIRED if expired else HistoryOutcome.CANCELLED
    if prompt.kind is PromptKind.APPROVAL and prompt.answers:
        decision = prompt.answers[0].answer
        if decision == [APPROVE]:
            return HistoryOutcome.APPROVED
        if decision == [DENY]:
            return HistoryOutcome.DENIED
    return HistoryOutcome.ANSWERED


def history_record(prompt: Prompt, fields: dict[str, str]) -> dict[str, Any]:
    """The record of a settled prompt (``fields``: its stored hash, which names who cancelled it)."""
    return bounded(_whole_record(prompt, fields))


def _whole_record(
    prompt: Prompt, fields: dict[str, str], public: dict[str, Any] | None = None
) -> dict[str, Any]:
    record = prompt.public() if public is None else dict(public)
    cancelled_by = fields.get("cancelled_by") or None
    if prompt.prompt_state is PromptState.CANCELLED and cancelled_by:
        record["cancelled_by"] = cancelled_by
    record["outcome"] = outcome_of(prompt).value
    record["by"] = prompt.answered_by if prompt.prompt_state is PromptState.ANSWERED else cancelled_by
    record["person"] = prompt.person if prompt.prompt_state is PromptState.ANSWERED else None
    record["asserted_by"] = prompt.asserted_by if prompt.prompt_state is PromptState.ANSWERED else None
    for name in LISTS:  # filled by the prompt where it carries them, else empty
        value = record.get(name)
        record[name] = value if isinstance(value, list) else []
    return record


def history_entry(prompt: Prompt, fields: dict[str, str], public: dict[str, Any] | None = None) -> FeedEntry:
    """The record as an entry for its thread's partition of the history, appended once by the prompt's id
    (``public``: ``prompt.public()`` when the caller has it already; it is left as it is)."""
    stream = keys.history_feed(keys.partition(prompt.thread_id))
    return FeedEntry(stream, prompt.prompt_id, bounded_json(_whole_record(prompt, fields, public)))


def grant_use_entry(run: Run, grant: Grant, call: ToolCall, now_ms: int) -> FeedEntry:
    """A call a grant let through, as its own history record: an approval nobody was asked about,
    ``approved`` by ``grant:<grant_id>``, naming the grant (and the prompt whose approval made it) in
    ``grants_used``. Its id is the grant's use, so a record is written once per use."""
    at = datetime.fromtimestamp(now_ms / 1000, UTC).isoformat()
    record: dict[str, Any] = {
        "prompt_id": None,
        "run_id": run.run_id,
        "thread_id": run.thread_id,
        "agent": run.agent,
        "kind": PromptKind.APPROVAL.value,
        "prompt_state": PromptState.ANSWERED.value,
        "tool_call": call.model_dump(mode="json"),
        "approved_call": call.model_dump(mode="json"),
        "answers": [],
        "answered_by": grant.by,
        "created_at": at,
        "settled_at": at,
        "outcome": HistoryOutcome.APPROVED.value,
        "by": grant.by,
        "votes": [],
        "grants_used": [
            {
                "grant_id": grant.grant_id,
                "match": grant.match.model_dump(mode="json"),
                "created_by": grant.created_by,
                "prompt_id": grant.prompt_id,
                "use": grant.uses,
            }
        ],
        "escalations": [],
    }
    stream = keys.history_feed(keys.partition(run.thread_id))
    return FeedEntry(stream, f"{grant.grant_id}.{grant.uses}", bounded_json(record))


# Bounded size ----------------------------------------------------------------------------------------


def _json(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def _size(record: dict[str, Any]) -> int:
    return len(_json(record).encode("utf-8", "surrogatepass"))


def _fits(value: Any, depth: int = 0) -> bool:
    """Whether ``_clip`` would leave ``value`` as it is (no text, list, object or nesting to cut).
    Written for speed (every settled prompt's record goes through it): leaves are checked in the loop,
    only lists and objects recurse."""
    if isinstance(value, str):
        return len(value) <= MAX_TEXT
    if isinstance(value, dict):
        items: Any = value.values()
    elif isinstance(value, list):
        items = value
    else:
        return True
    if depth >= MAX_DEPTH or len(value) > MAX_ITEMS:
        return False
    for item in items:
        if type(item) is str:
            if len(item) > MAX_TEXT:
                return False
        elif isinstance(item, (dict, list, str)) and not _fits(item, depth + 1):
            return False
    return True


def bounded_json(record: dict[str, Any]) -> str:
    """``bounded(record)`` as JSON. A record with nothing to cut (nearly all) is encoded once, as it is."""
    if _fits(record):  # then every number in it came from a stored value, finite: orjson writes it alike
        text = jsontext.dumps({**record, "truncated": False})
        # Each character takes at most 4 bytes; only a record near the bound is measured in bytes.
        size = len(text) * 4
        if size > MAX_RECORD_BYTES:
            size = len(text.encode("utf-8", "surrogatepass"))
        if size <= MAX_RECORD_BYTES:
            return text
    return _json(bounded(record))


def _clip(value: Any, text: int, depth: int = 0) -> tuple[Any, bool]:
    """``value`` with each text cut to ``text`` characters, each list or object to ``MAX_ITEMS`` entries
    and nesting to ``MAX_DEPTH``, each cut marked; and whether anything was cut."""
    if isinstance(value, str):
        if len(value) <= text:
            return value, False
        return value[:text] + CUT.format(len(value) - text), True
    if not isinstance(value, (list, dict)):
        return value, False
    if depth >= MAX_DEPTH:
        return f"…[cut: nested deeper than {MAX_DEPTH} levels]", True
    cut = len(value) > MAX_ITEMS
    if isinstance(value, list):
        kept: list[Any] = []
        for item in value[:MAX_ITEMS]:
            clipped, was = _clip(item, text, depth + 1)
            kept.append(clipped)
            cut |= was
        if len(value) > MAX_ITEMS:
            kept.append(f"…[cut: {len(value) - MAX_ITEMS} more items]")
        return kept, cut
    out: dict[str, Any] = {}
    for key, item in list(value.items())[:MAX_ITEMS]:
        clipped, was = _clip(item, text, depth + 1)
        out[key] = clipped
        cut |= was
    if len(value) > MAX_ITEMS:
        out["…"] = f"[cut: {len(value) - MAX_ITEMS} more entries]"
    return out, cut


def _replace_by_size(record: dict[str, Any], path: tuple[str, ...]) -> bool:
    """Replace the part of ``record`` at ``path`` by a note of its size; whether there was one."""
    holder: Any = record
    for key in path[:-1]:
        holder = holder.get(key) if isinstance(holder, dict) else None
    if not isinstance(holder, dict) or path[-1] not in holder:
        return False
    size = len(json.dumps(holder[path[-1]], ensure_ascii=False))
    holder[path[-1]] = f"…[cut: {size} characters]"
    return True


def bounded(record: dict[str, Any]) -> dict[str, Any]:
    """The record within ``MAX_RECORD_BYTES``: texts, lists and nesting cut first; then, while still too
    large, the bulky parts (schemas, the call's arguments, a form's values) replaced by a note of their
    size; then texts cut shorter and options dropped. ``truncated`` says whether anything was cut."""
    clipped: dict[str, Any]
    clipped, cut = _clip(record, MAX_TEXT)
    for path in BULKY:
        if _size(clipped) <= MAX_RECORD_BYTES:
            break
        cut |= _replace_by_size(clipped, path)
    if _size(clipped) > MAX_RECORD_BYTES:
        clipped = _clip(clipped, SHORT_TEXT)[0]
        for question in clipped.get("questions") or []:
            if isinstance(question, dict) and question.get("options"):
                question["options"] = [{"label": option.get("label", "")} for option in question["options"]]
        cut = True
    clipped["truncated"] = cut
    return clipped


# Reading ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HistoryQuery:
    """What a history read keeps: each filter that is set must match; ``agents`` is the token's scope
    (None: every agent). ``since_ms`` and ``until_ms`` bound when the prompt settled, ``until`` excluded."""

    agent: str | None = None
    run: str | None = None
    thread: str | None = None
    by: str | None = None
    # A directory person: records they settled or voted on, as a person or from one of ``identities``.
    person: str | None = None
    identities: frozenset[str] = frozenset()
    outcome: HistoryOutcome | None = None
    since_ms: int | None = None
    until_ms: int | None = None
    agents: frozenset[str] | None = None

    def keeps(self, record: dict[str, Any], recorded_ms: int) -> bool:
        agent = record.get("agent")
        if self.agents is not None and agent not in self.agents:
            return False
        if self.agent is not None and agent != self.agent:
            return False
        if self.run is not None and record.get("run_id") != self.run:
            return False
        if self.thread is not None and record.get("thread_id") != self.thread:
            return False
        if self.outcome is not None and record.get("outcome") != self.outcome.value:
            return False
        if self.by is not None and self.by not in people(record):
            return False
        if self.person is not None and not _by_person(record, self.person, self.identities):
            return False
        moment = settled_moment(record, recorded_ms)
        if self.since_ms is not None and moment < self.since_ms:
            return False
        return self.until_ms is None or moment < self.until_ms

    def bounds(self) -> tuple[str, str]:
        """The stream ids to scan: from ``since``, to ``until`` plus the time a record may come late."""
        low = "-" if self.since_ms is None else str(self.since_ms)
        high = "+" if self.until_ms is None else str(max(self.until_ms + LATE_MS - 1, 0))
        return low, high


def people(record: dict[str, Any]) -> set[str]:
    """Who settled the prompt or voted on it."""
    found = {record.get("answered_by"), record.get("cancelled_by"), record.get("by")}
    found |= {vote.get("by") for vote in record.get("votes") or [] if isinstance(vote, dict)}
    return {person for person in found if isinstance(person, str)}


def _by_person(record: dict[str, Any], person: str, identities: frozenset[str]) -> bool:
    """Whether ``person`` settled the prompt or voted on it: recorded as them, or from one of their
    identities (a record kept before the identity was linked)."""
    if record.get("person") == person:
        return True
    votes = record.get("votes") or []
    if any(isinstance(vote, dict) and vote.get("person") == person for vote in votes):
        return True
    return bool(people(record) & identities)


def settled_moment(record: dict[str, Any], recorded_ms: int) -> int:
    """When the record counts as settled for ``since``/``until``: its ``settled_at``, unless it was
    recorded more than ``LATE_MS`` after that (every gateway process was down meanwhile); then when it was
    recorded, so a window that has passed never gains a record and none is left out of every window."""
    try:
        settled_ms = to_ms(datetime.fromisoformat(str(record.get("settled_at"))))
    except ValueError:
        return recorded_ms
    return settled_ms if recorded_ms - settled_ms <= LATE_MS else recorded_ms


def recorded_at(entry_id: str) -> tuple[int, str]:
    """A stream id's time, in ms and as RFC 3339."""
    ms = int(entry_id.split("-", 1)[0])
    return ms, datetime.fromtimestamp(ms / 1000, UTC).isoformat().replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class HistoryPage:
    """Records found, and the cursor to go on after the last entry read (None: nothing is left)."""

    items: list[dict[str, Any]]
    next: str | None


async def read_history(
    store: Store,
    query: HistoryQuery,
    after: tuple[str, ...] | None,
    limit: int,
    *,
    newest_first: bool = True,
    budget: int = SCAN_BUDGET,
) -> HistoryPage:
    """Up to ``limit`` records the query keeps, merged from the partitions, after ``after`` (a position in
    each partition, as ``history_positions`` reads a cursor; None: from the start). At most ``budget``
    entries are read: a page may then hold fewer records than ``limit``, even none, with a cursor to go on."""
    merge = _Merge(store, query, after or (UNTOUCHED,) * len(keys.EVERY_PARTITION), limit, newest_first)
    items: list[dict[str, Any]] = []
    for scanned in range(budget):
        entry = await merge.take(budget - scanned)
        if entry is None:
            return HistoryPage(items, None)
        record = _record(*entry, query)
        if record is not None:
            items.append(record)
            if len(items) >= limit:
                break
    return HistoryPage(items, history_vector_cursor(merge.cursor()))


def _partitions(query: HistoryQuery) -> list[int]:
    """The partitions that can hold the query's records: a thread's own and the legacy stream, or all."""
    if query.thread is None:
        return list(keys.EVERY_PARTITION)
    return [keys.partition(query.thread), keys.LEGACY]


def _just_above(ms: int, seq: int) -> str:
    """The stream id right after ``<ms>-<seq>``."""
    if seq < U64:
        return f"{ms}-{seq + 1}"
    return f"{ms + 1}-0" if ms < U64 else LAST_STREAM_ID


Row = tuple[tuple[int, int], str, str]  # (stream id as numbers, stream id, record JSON)


@dataclass(slots=True)
class _Partition:
    """One partition in a page's merge: the position of the last entry taken from it, the last entry read,
    the entries read and not taken yet, the size of its next read, and whether its range is spent."""

    part: int
    position: str
    edge: str
    size: int
    rows: deque[Row] = field(default_factory=deque)
    done: bool = False


class _Merge:
    """The entries of the partitions a query reads, in one order: newest first by (stream id, partition)
    descending, oldest first ascending (exactly the reverse). Every partition running short is read on in
    the same step, in parallel; only the entries taken move a partition's position."""

    def __init__(
        self, store: Store, query: HistoryQuery, after: tuple[str, ...], limit: int, newest_first: bool
    ) -> None:
        self.store = store
        self.newest_first = newest_first
        self.low, self.high = query.bounds()
        self.after = after
        size = min(max(limit, MIN_READ), SCAN_PAGE)
        self.parts = [_Partition(part, after[part], after[part], size) for part in _partitions(query)]
        for one in self.parts:
            one.done = not newest_first and one.edge == LAST_STREAM_ID  # nothing can follow it
        self.last: tuple[tuple[int, int], int] | None = None

    async def take(self, budget: int) -> tuple[str, str] | None:
        """The next entry (stream id, record JSON), or None when no partition has one; ``budget``: how
        many entries the page may still take."""
        if any(not one.rows and not one.done for one in self.parts):
            await self._read(budget)
        live = [one for one in self.parts if one.rows]
        if not live:
            return None
        choose = max if self.newest_first else min
        best = choose(live, key=lambda one: (one.rows[0][0], one.part))
        key, entry_id, text = best.rows.popleft()
        best.position = entry_id
        self.last = (key, best.part)
        return entry_id, text

    async def _read(self, budget: int) -> None:
        """Read on in each partition with more to read that holds less than half its next read; the
        reads share ``budget`` (each at least ``MIN_READ``), each growing twofold up to ``SCAN_PAGE``."""
        active = [one for one in self.parts if not one.done]
        share = max(budget // len(active), MIN_READ)
        reads = [(one, min(one.size, share)) for one in active]
        reads = [(one, count) for one, count in reads if 2 * len(one.rows) < count]
        found = await asyncio.gather(*(self._rows(one, count) for one, count in reads))
        for (one, count), rows in zip(reads, found, strict=True):
            one.rows.extend((position(entry_id), entry_id, text) for entry_id, text in rows)
            one.edge = rows[-1][0] if rows else one.edge
            one.done = len(rows) < count
            one.size = min(2 * one.size, SCAN_PAGE)

    async def _rows(self, one: _Partition, count: int) -> list[tuple[str, str]]:
        low, high = self.low, self.high
        if one.edge != UNTOUCHED:
            if self.newest_first:
                high = f"({one.edge}"
            else:
                low = f"({one.edge}"
        return await self.store.history_rows(one.part, low, high, count, newest_first=self.newest_first)

    def cursor(self) -> tuple[str, ...]:
        """Where the reader stands in each partition. Newest first, a partition nothing was taken from
        stands right after the last entry taken, in the merged order: a record written there since is
        newer than the pages already served, and does not turn up below them."""
        positions = list(self.after)
        for one in self.parts:
            positions[one.part] = one.position
        if self.newest_first and self.last is not None:
            (ms, seq), last_part = self.last
            for one in self.parts:
                if one.position == UNTOUCHED:
                    positions[one.part] = _just_above(ms, seq) if one.part < last_part else f"{ms}-{seq}"
        return tuple(positions)


def _record(entry_id: str, text: str, query: HistoryQuery) -> dict[str, Any] | None:
    """The stored record with when it was recorded, if the query keeps it."""
    try:
        record = json.loads(text)
    except ValueError:
        return None
    if not isinstance(record, dict):
        return None
    ms, moment = recorded_at(entry_id)
    if not query.keeps(record, ms):
        return None
    record["recorded_at"] = moment
    return record
