"""``threadgate history export``: the audit history as JSON lines or CSV on stdout, through the HTTP API."""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, TextIO

from gateway.client import Threadgate
from gateway.process.commands import Exit, command_actions, fail, run_api

PAGE = 500
COLUMNS = (
    "prompt_id",
    "run_id",
    "thread_id",
    "agent",
    "kind",
    "outcome",
    "by",
    "answered_by",
    "cancelled_by",
    "created_at",
    "settled_at",
    "recorded_at",
    "question",
    "answers",
    "note",
    "reason",
    "reason_code",
    "tool_call",
    "approved_call",
    "votes",
    "grants_used",
    "escalations",
    "truncated",
)
JSON_COLUMNS = ("tool_call", "approved_call", "votes", "grants_used", "escalations")
TEXT_COLUMNS = ("question", "answers", "note", "reason")
# A cell a spreadsheet would run as a formula starts with one of these; such text gets a leading '.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
AGO = re.compile(r"(\d{1,6})([mhd])", re.ASCII)
UNITS = {"m": "minutes", "h": "hours", "d": "days"}
# gateway.decision.history.HistoryOutcome
OUTCOMES = ("answered", "approved", "denied", "cancelled", "expired")


def moment(value: str, now: datetime | None = None) -> str:
    """``--since``/``--until`` as the API takes them: an RFC 3339 time or a date as it is, or a time ago
    (``90m``, ``12h``, ``7d``) as the time it names. Raises ValueError saying what to write instead."""
    text = value.strip()
    ago = AGO.fullmatch(text)
    if ago:
        span = timedelta(**{UNITS[ago.group(2)]: int(ago.group(1))})
        return ((now or datetime.now(UTC)) - span).isoformat()
    try:
        datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"{value!r} is not a time: write an RFC 3339 time (2026-01-31T09:00:00Z), a date (2026-01-31) "
            "or a time ago (90m, 12h, 7d)"
        ) from None
    return text


def _cell(value: str) -> str:
    """Text as a CSV cell a spreadsheet shows rather than runs."""
    return f"'{value}" if value.startswith(FORMULA_STARTS) else value


def _question(record: dict[str, Any]) -> str:
    if record.get("message"):
        return str(record["message"])
    return "\n".join(str(question.get("question", "")) for question in record.get("questions") or [])


def _answers(record: dict[str, Any]) -> str:
    answers = [answer for answer in record.get("answers") or [] if isinstance(answer, dict)]
    chosen = [", ".join(str(choice) for choice in answer.get("answer") or []) for answer in answers]
    if len(answers) == 1:
        return chosen[0]
    pairs = zip(answers, chosen, strict=True)
    return "\n".join(f"{answer.get('question', '')}: {text}" for answer, text in pairs)


def csv_row(record: dict[str, Any]) -> list[str]:
    """A record as the CSV's fixed columns: texts plain, calls and votes as JSON, absent values empty."""
    values: dict[str, Any] = {name: record.get(name) for name in COLUMNS}
    values["question"] = _question(record)
    values["answers"] = _answers(record)
    row = []
    for name in COLUMNS:
        value = values[name]
        if name in JSON_COLUMNS:
            text = "" if value is None else json.dumps(value, ensure_ascii=False)
        elif isinstance(value, bool):
            text = "true" if value else "false"
        else:
            text = "" if value is None else str(value)
        row.append(_cell(text) if name in TEXT_COLUMNS else text)
    return row


def writer_for(form: str, out: TextIO) -> Callable[[dict[str, Any]], None]:
    """Writes one record at a time: a JSON line, or a CSV row after the header."""
    if form == "jsonl":

        def line(record: dict[str, Any]) -> None:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")

        return line
    rows = csv.writer(out)
    rows.writerow(COLUMNS)

    def row(record: dict[str, Any]) -> None:
        rows.writerow(csv_row(record))

    return row


def export_command(args: argparse.Namespace) -> int:
    try:
        since = moment(args.since)
        until = moment(args.until) if args.until else None
    except ValueError as exc:
        return fail(str(exc), Exit.USAGE)
    filters = {"agent": args.agent, "run": args.run, "thread": args.thread, "by": args.by}
    filters["outcome"] = args.outcome

    async def work(client: Threadgate) -> int:
        write: Callable[[dict[str, Any]], None] | None = None
        after: str | None = None
        while True:
            page = await client.history(
                **filters, since=since, until=until, after=after, limit=PAGE, order="oldest"
            )
            write = write or writer_for(args.format, sys.stdout)  # the header once the gateway answered
            for record in page.items:
                write(record)
            sys.stdout.flush()
            if page.cursor is None:
                return Exit.OK
            after = page.cursor

    return run_api(args.url, work)


def add_parsers(commands: Any) -> None:
    actions = command_actions(
        commands,
        "history",
        help="export the audit history of settled prompts (through the HTTP API)",
        description="The settled prompts the gateway keeps (THREADGATE_HISTORY_DAYS, default 90): who "
        "answered or cancelled each, when, what was asked and allowed, every vote. Read through the HTTP "
        "API at THREADGATE_URL with THREADGATE_TOKEN (an agent token sees its agents' records only).",
    )
    export = actions.add_parser(
        "export",
        help="write settled prompts to stdout, oldest first, as JSON lines or CSV",
        description="Write every settled prompt of a time window to stdout, oldest first: one JSON record a "
        "line (jsonl), or CSV with fixed columns. --since is the window's start (included), --until its "
        "end (left out), so consecutive windows never repeat a record; for an archive without gaps, end "
        "each window a few minutes in the past (a record is written just after its prompt settles).",
        epilog="examples:\n"
        "  threadgate history export --since 7d --format csv > approvals.csv\n"
        "  threadgate history export --since 2026-01-01 --until 2026-02-01 --outcome denied\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    export.add_argument(
        "--since", required=True, help="RFC 3339 time, date, or a time ago such as 90m, 12h, 7d"
    )
    export.add_argument("--until", help="RFC 3339 time, date, or a time ago; default: to the newest record")
    export.add_argument("--format", choices=["jsonl", "csv"], default="jsonl", help="default jsonl")
    export.add_argument("--agent", help="only this agent's prompts")
    export.add_argument("--run", help="only this run's prompts (a run id)")
    export.add_argument("--thread", help="only this thread's prompts (a thread id)")
    export.add_argument("--by", metavar="IDENTITY", help="only prompts this person settled or voted on")
    export.add_argument("--outcome", choices=OUTCOMES, help="only prompts that settled so")
    export.add_argument(
        "--url", help="the gateway's address (default THREADGATE_URL or http://127.0.0.1:8787)"
    )
    export.set_defaults(handler=export_command)
