"""``threadgate history export``: the audit history on stdout as JSON lines or CSV, filtered by time window
and the API's filters."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from gateway.decision.history import HistoryOutcome
from gateway.process.commands.history import COLUMNS, OUTCOMES, csv_row, moment
from tests.cli.conftest import Cli, Ran, raise_in
from tests.support.conditions import eventually

APPROVAL = {
    "kind": "approval",
    "questions": [{"question": "Drop the staging database?"}],
    "tool_call": {"name": "db__drop", "arguments": {"database": "staging"}},
}
QUESTION = {"kind": "text", "questions": [{"question": "Which branch?"}]}


async def settle(cli: Cli, agent: httpx.AsyncClient, room: str, body: dict[str, Any], *answer: str) -> str:
    prompt = await raise_in(agent, room, body)
    ran = await cli("prompts", "answer", prompt["prompt_id"], "--as", "web:alice", *answer)
    assert ran.code == 0, ran.err
    return str(prompt["prompt_id"])


async def exported(cli: Cli, count: int, *argv: str) -> Ran:
    """The export once it holds ``count`` records (they are written just after each answer)."""
    ran: list[Ran] = []

    async def enough() -> bool:
        ran[:] = [await cli("history", "export", *argv)]
        lines = [line for line in ran[0].out.splitlines() if line]
        header = 1 if "csv" in argv else 0
        return ran[0].code == 0 and len(lines) - header >= count

    await eventually(enough, f"{count} records exported")
    return ran[0]


async def test_jsonl_has_one_record_a_line_oldest_first(cli: Cli, agent: httpx.AsyncClient) -> None:
    approved = await settle(cli, agent, "one", APPROVAL, "approve")
    denied = await settle(cli, agent, "two", APPROVAL, "deny")
    ran = await exported(cli, 2, "--since", "1h", "--format", "jsonl")
    records = [json.loads(line) for line in ran.out.splitlines()]
    assert [record["prompt_id"] for record in records] == [approved, denied]
    assert [record["outcome"] for record in records] == ["approved", "denied"]
    assert records[0]["tool_call"] == APPROVAL["tool_call"] and records[0]["by"] == "web:alice"


async def test_csv_has_the_fixed_columns_and_one_row_a_record(cli: Cli, agent: httpx.AsyncClient) -> None:
    approved = await settle(cli, agent, "csv", APPROVAL, "approve")
    ran = await exported(cli, 1, "--since", "2000-01-01", "--format", "csv")
    rows = list(csv.reader(io.StringIO(ran.out)))
    assert rows[0] == list(COLUMNS)
    row = dict(zip(COLUMNS, rows[1], strict=True))
    assert row["prompt_id"] == approved and row["outcome"] == "approved" and row["by"] == "web:alice"
    assert row["question"] == "Drop the staging database?" and row["answers"] == "Approve"
    assert json.loads(row["tool_call"]) == APPROVAL["tool_call"]
    assert json.loads(row["votes"]) == [] and row["truncated"] == "false"


async def test_filters_and_the_window_narrow_the_export(cli: Cli, agent: httpx.AsyncClient) -> None:
    await settle(cli, agent, "keep", APPROVAL, "approve")
    denied = await settle(cli, agent, "drop", APPROVAL, "deny")
    await exported(cli, 2, "--since", "1h")
    only_denied = await cli("history", "export", "--since", "1h", "--outcome", "denied")
    assert [json.loads(line)["prompt_id"] for line in only_denied.out.splitlines()] == [denied]
    nobody = await cli("history", "export", "--since", "1h", "--by", "web:mallory")
    before = await cli("history", "export", "--since", "2000-01-01", "--until", "2000-02-01")
    assert (nobody.code, nobody.out, before.code, before.out) == (0, "", 0, "")


async def test_a_csv_export_of_nothing_is_its_header(cli: Cli) -> None:
    ran = await cli("history", "export", "--since", "7d", "--format", "csv")
    assert (ran.code, ran.out.strip()) == (0, ",".join(COLUMNS))


async def test_an_agent_token_exports_its_agents_records(cli: Cli, agent: httpx.AsyncClient) -> None:
    await settle(cli, agent, "mine", QUESTION, "main")
    await exported(cli, 1, "--since", "1h")
    ran = await cli("history", "export", "--since", "1h", token="agent")
    assert ran.code == 0 and json.loads(ran.out)["outcome"] == "answered"


async def test_a_time_that_is_no_time_exits_2_before_calling_the_gateway(cli: Cli) -> None:
    ran = await cli("history", "export", "--since", "last tuesday")
    assert ran.code == 2 and "is not a time" in ran.err and ran.out == ""


def test_times_ago_dates_and_rfc3339_times_are_taken() -> None:
    now = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    assert moment("90m", now) == (now - timedelta(minutes=90)).isoformat()
    assert moment("7d", now) == (now - timedelta(days=7)).isoformat()
    assert moment("2026-01-31") == "2026-01-31"
    assert moment(" 2026-01-31T09:00:00Z ") == "2026-01-31T09:00:00Z"
    with pytest.raises(ValueError, match="a time ago"):
        moment("7 days")


def test_text_a_spreadsheet_would_run_as_a_formula_is_kept_as_text() -> None:
    record = {
        "prompt_id": "prm_1",
        "questions": [{"question": '=HYPERLINK("http://evil.example")'}],
        "answers": [{"question": "q", "question_id": "q1", "answer": ["+1 555"]}],
        "note": "@everyone",
        "tool_call": {"name": "Bash", "arguments": {"command": "=1+1"}},
    }
    row = dict(zip(COLUMNS, csv_row(record), strict=True))
    assert row["question"] == '\'=HYPERLINK("http://evil.example")'
    assert (row["answers"], row["note"]) == ("'+1 555", "'@everyone")
    assert json.loads(row["tool_call"])["arguments"]["command"] == "=1+1"  # JSON cells start with {


def test_several_answers_are_named_by_their_question() -> None:
    record = {
        "answers": [
            {"question": "Target?", "question_id": "q1", "answer": ["staging"]},
            {"question": "Sections?", "question_id": "q2", "answer": ["KPI cards", "Table"]},
        ]
    }
    row = dict(zip(COLUMNS, csv_row(record), strict=True))
    assert row["answers"] == "Target?: staging\nSections?: KPI cards, Table"


def test_the_outcome_choices_are_the_historys_outcomes() -> None:
    assert tuple(outcome.value for outcome in HistoryOutcome) == OUTCOMES
