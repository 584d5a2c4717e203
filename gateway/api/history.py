"""``GET /v1/history``: settled prompts for the audit, filtered and paged, newest first."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from gateway.api.auth import Caller
from gateway.api.deps import Core
from gateway.api.errors import error_responses
from gateway.api.schemas import Open
from gateway.api.scope import visible
from gateway.base.cursors import history_positions
from gateway.base.errors import validation_failed
from gateway.base.models import person_id, to_ms
from gateway.decision.history import HistoryOutcome, HistoryQuery, read_history
from gateway.store import keys

router = APIRouter(prefix="/v1", tags=["history"])

MAX_LIMIT = 500
DEFAULT_LIMIT = 50
MAX_FILTER_CHARS = 200
ORDERS = ("newest", "oldest")
OUTCOMES = ", ".join(outcome.value for outcome in HistoryOutcome)


class HistoryRecord(Open):
    """A settled prompt as the API serves it, plus how it settled for the audit."""

    prompt_id: str
    run_id: str
    thread_id: str
    agent: str
    kind: str
    prompt_state: str
    outcome: str = Field(description=f"One of {OUTCOMES}.")
    by: str | None = Field(description="Who answered or cancelled it (null: the agent or the gateway).")
    settled_at: str | None
    recorded_at: str = Field(description="When the record was written (just after it settled).")
    votes: list[dict[str, Any]]
    grants_used: list[Any]
    escalations: list[Any]
    truncated: bool = Field(description="True when long texts or arguments were cut to bound the record.")


class HistoryList(BaseModel):
    items: list[HistoryRecord]
    next: str | None = Field(description="Pass as `after` for the next page; null at the end.")
    cursor: str | None = Field(description="The same as `next`, as every list of the API names it.")


def _problem(field: str, problem: str) -> dict[str, str]:
    return {"field": field, "in": "query", "problem": problem}


def _moment(field: str, value: str | None, problems: list[dict[str, str]]) -> int | None:
    """An RFC 3339 time (or a date, as its midnight) in ms; a time without an offset is UTC."""
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        problems.append(_problem(field, "expected an RFC 3339 time such as 2026-01-31T09:00:00Z"))
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return max(to_ms(moment), 0)
    except (OverflowError, ValueError):
        problems.append(_problem(field, "the time is out of range"))
        return None


def parse_query(
    params: dict[str, str | None], agents: frozenset[str] | None
) -> tuple[HistoryQuery, tuple[str, ...] | None, int, bool]:
    """The filters, the positions to go on after (one per partition), the limit and the order; 400
    VALIDATION_FAILED naming every parameter at fault."""
    problems: list[dict[str, str]] = []
    for name in ("agent", "run", "thread", "by"):
        value = params[name]
        if value is not None and not 1 <= len(value) <= MAX_FILTER_CHARS:
            problems.append(_problem(name, f"expected 1 to {MAX_FILTER_CHARS} characters"))
    outcome = None
    if params["outcome"] is not None:
        try:
            outcome = HistoryOutcome(params["outcome"])
        except ValueError:
            problems.append(_problem("outcome", f"expected one of {OUTCOMES}"))
    since_ms = _moment("since", params["since"], problems)
    until_ms = _moment("until", params["until"], problems)
    positions = None
    cursor_name = "after" if params["after"] is not None else "cursor"
    cursor = params["after"] if params["after"] is not None else params["cursor"]
    if cursor:
        try:
            positions = history_positions(cursor, len(keys.EVERY_PARTITION))
        except ValueError as exc:
            problems.append(_problem(cursor_name, str(exc)))
    limit = DEFAULT_LIMIT
    if params["limit"] is not None:
        raw = params["limit"].strip()
        if raw.isascii() and raw.isdigit() and len(raw) <= 6 and 1 <= int(raw) <= MAX_LIMIT:
            limit = int(raw)
        else:
            problems.append(_problem("limit", f"expected a whole number from 1 to {MAX_LIMIT}"))
    order = params["order"] or "newest"
    if order not in ORDERS:
        problems.append(_problem("order", "expected newest or oldest"))
    if problems:
        first = problems[0]
        raise validation_failed(f"Parameter {first['field']!r} is invalid: {first['problem']}.", problems)
    query = HistoryQuery(
        agent=params["agent"],
        run=params["run"],
        thread=params["thread"],
        by=params["by"],
        outcome=outcome,
        since_ms=since_ms,
        until_ms=until_ms,
        agents=agents,
    )
    return query, positions, limit, order == "newest"


@router.get("/history", response_model=HistoryList, responses=error_responses(400))
async def history(
    core: Core,
    caller: Caller,
    agent: Annotated[str | None, Query(description="Only this agent's prompts.")] = None,
    run: Annotated[str | None, Query(description="Only this run's prompts (a run id).")] = None,
    thread: Annotated[str | None, Query(description="Only this thread's prompts (a thread id).")] = None,
    by: Annotated[str | None, Query(description="Only prompts this identity settled or voted on.")] = None,
    person: Annotated[
        str | None,
        Query(description="Only prompts this directory person (alice or person:alice) settled or voted on."),
    ] = None,
    outcome: Annotated[str | None, Query(description=f"One of {OUTCOMES}.")] = None,
    since: Annotated[str | None, Query(description="Settled at or after this RFC 3339 time.")] = None,
    until: Annotated[str | None, Query(description="Settled before this RFC 3339 time.")] = None,
    after: Annotated[str | None, Query(description="The `next` of the page before.")] = None,
    cursor: Annotated[str | None, Query(description="Another name for `after`.")] = None,
    limit: Annotated[str | None, Query(description=f"Records a page, 1 to {MAX_LIMIT}; default 50.")] = None,
    order: Annotated[str | None, Query(description="newest (default) or oldest first.")] = None,
) -> JSONResponse:
    """Settled prompts with who settled them and how, for the audit, kept ``THREADGATE_HISTORY_DAYS``.

    Every filter given must match. Each request reads a bounded part of the history: a page may hold fewer
    records than ``limit``, even none, while ``next`` is not null; follow ``next`` until it is. A token
    acting for some agents sees their records only. Bad parameters are 400 VALIDATION_FAILED.
    """
    params = {
        "agent": agent,
        "run": run,
        "thread": thread,
        "by": by,
        "outcome": outcome,
        "since": since,
        "until": until,
        "after": after,
        "cursor": cursor,
        "limit": limit,
        "order": order,
    }
    query, positions, size, newest_first = parse_query(params, caller.agents)
    if person is not None:
        try:
            bare = person_id(person)
        except ValueError as exc:
            raise validation_failed(
                f"Parameter 'person' is invalid: {exc}.", [_problem("person", str(exc))]
            ) from None
        who = await core.store.people.get(bare)
        query = replace(query, person=bare, identities=frozenset(who.identities if who else ()))
    if agent is not None and not visible(caller, agent):
        return JSONResponse({"items": [], "next": None, "cursor": None})
    page = await read_history(core.store, query, positions, size, newest_first=newest_first)
    return JSONResponse({"items": page.items, "next": page.next, "cursor": page.next})
