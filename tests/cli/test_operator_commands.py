"""``threadgate prompts`` and ``threadgate approvers``: the inbox and allow-lists from a terminal."""

from __future__ import annotations

import httpx
import pytest

from gateway.cli import build_parser, main
from gateway.demo import Demo
from tests.cli.conftest import Cli, raise_in

APPROVAL = {"kind": "approval", "questions": [{"question": "Drop the staging database?"}]}
FORM = {
    "kind": "ask_user_question",
    "questions": [
        {"question": "Target?", "options": [{"label": "staging"}, {"label": "production"}]},
        {
            "question": "Sections?",
            "multiSelect": True,
            "options": [{"label": "KPI cards"}, {"label": "Table"}],
        },
        {"question": "Style?"},
    ],
}


async def state_of(agent: httpx.AsyncClient, prompt_id: str) -> dict[str, object]:
    result: dict[str, object] = (await agent.get(f"/v1/prompts/{prompt_id}")).json()
    return result


def test_help_names_every_command_and_the_exit_codes() -> None:
    text = build_parser().format_help()
    for command in ("serve", "demo", "prompts", "approvers", "doctor"):
        assert command in text
    assert "3 gateway unreachable" in text


async def test_prompts_list_shows_pending_prompts_newest_first(cli: Cli, agent: httpx.AsyncClient) -> None:
    older = await raise_in(agent, "one", APPROVAL)
    newer = await raise_in(agent, "two", FORM)
    listed = await cli("prompts", "list", "--json")
    table = await cli("prompts", "list")
    assert listed.code == 0
    assert [item["prompt_id"] for item in listed.json()["items"]] == [newer["prompt_id"], older["prompt_id"]]
    lines = table.out.splitlines()
    assert lines[0].split() == ["PROMPT", "AGENT", "THREAD", "KIND", "AGE", "QUESTION"]
    assert newer["prompt_id"] in lines[1] and "Target? (+2 more)" in lines[1]


async def test_prompts_list_says_so_when_nothing_waits(cli: Cli) -> None:
    ran = await cli("prompts", "list")
    assert (ran.code, ran.out.strip()) == (0, "No prompt is waiting for an answer.")


async def test_answering_an_approval_for_the_runs_starter_resolves_it(
    cli: Cli, agent: httpx.AsyncClient
) -> None:
    prompt = await raise_in(agent, "approve", APPROVAL)
    ran = await cli("prompts", "answer", prompt["prompt_id"], "--as", "web:alice", "approve")
    assert ran.code == 0 and "answered by web:alice: Approve" in ran.out
    settled = await state_of(agent, prompt["prompt_id"])
    assert settled["answers"] == [
        {"question": "Drop the staging database?", "question_id": "q1", "answer": ["Approve"]}
    ]


async def test_answer_pairs_fill_each_question_of_a_form(cli: Cli, agent: httpx.AsyncClient) -> None:
    prompt = await raise_in(agent, "form", FORM)
    pairs = ["--answer", "q1=production", "--answer", "q2=KPI cards", "--answer", "q2=Table"]
    ran = await cli(
        "prompts", "answer", prompt["prompt_id"], "--as", "web:alice", "--json", *pairs, "--answer", "q3=dark"
    )
    assert ran.code == 0
    assert [answer["answer"] for answer in ran.json()["answers"]] == [
        ["production"],
        ["KPI cards", "Table"],
        ["dark"],
    ]


async def test_someone_who_may_not_answer_is_refused_with_exit_4(cli: Cli, agent: httpx.AsyncClient) -> None:
    prompt = await raise_in(agent, "refused", APPROVAL)
    ran = await cli("prompts", "answer", prompt["prompt_id"], "--as", "web:mallory", "approve")
    assert ran.code == 4
    assert "web:mallory may not answer" in ran.err and "(FORBIDDEN)" in ran.err
    assert (await state_of(agent, prompt["prompt_id"]))["prompt_state"] == "pending"


async def test_a_different_answer_to_a_settled_prompt_exits_6(cli: Cli, agent: httpx.AsyncClient) -> None:
    prompt = await raise_in(agent, "twice", APPROVAL)
    first = await cli("prompts", "answer", prompt["prompt_id"], "--as", "web:alice", "deny")
    same = await cli("prompts", "answer", prompt["prompt_id"], "--as", "web:alice", "deny")
    other = await cli("prompts", "answer", prompt["prompt_id"], "--as", "web:alice", "approve")
    assert (first.code, same.code, other.code) == (0, 0, 6)
    assert "ALREADY_RESOLVED" in other.err


async def test_an_unknown_prompt_exits_5(cli: Cli) -> None:
    ran = await cli("prompts", "answer", "prm_01J0000000000000000000000Z", "--as", "web:alice", "approve")
    assert ran.code == 5 and "PROMPT_NOT_FOUND" in ran.err


async def test_an_answer_that_does_not_fit_the_prompt_is_a_usage_error(
    cli: Cli, agent: httpx.AsyncClient
) -> None:
    prompt = await raise_in(agent, "unfit", APPROVAL)
    ran = await cli("prompts", "answer", prompt["prompt_id"], "--as", "web:alice", "maybe")
    assert ran.code == 2 and "answer approve or deny" in ran.err


async def test_cancel_on_a_persons_behalf_and_as_the_agent(cli: Cli, agent: httpx.AsyncClient) -> None:
    by_person = await raise_in(agent, "cancel-a", APPROVAL)
    by_agent = await raise_in(agent, "cancel-b", APPROVAL)
    first = await cli("prompts", "cancel", by_person["prompt_id"], "--as", "web:alice", "--json")
    second = await cli("prompts", "cancel", by_agent["prompt_id"], "--reason", "not needed", token="agent")
    assert first.code == 0 and first.json()["reason_code"] == "cancelled"
    assert second.code == 0 and "cancelled: not needed" in second.out


async def test_approvers_add_list_remove(cli: Cli, agent: httpx.AsyncClient) -> None:
    added = await cli("approvers", "add", "ops", "slack:U0123ABC", "web:bob", "--json")
    listed = await cli("approvers", "list", "ops")
    removed = await cli("approvers", "remove", "ops", "slack:U0123ABC", "--json")
    assert added.json() == {"agent": "ops", "approvers": ["slack:U0123ABC", "web:bob"]}
    assert listed.out.split() == ["slack:U0123ABC", "web:bob"]
    assert removed.json()["approvers"] == ["web:bob"]

    prompt = await raise_in(agent, "approver", APPROVAL)
    ran = await cli("prompts", "answer", prompt["prompt_id"], "--as", "web:bob", "yes")
    assert ran.code == 0  # an approver added from the CLI may answer


async def test_approvers_add_keeps_the_agents_escalation(cli: Cli, demo: Demo) -> None:
    plan = [
        {"after_seconds": 900, "remind": True, "to": []},
        {"after_seconds": 3600, "remind": False, "to": ["web:oncall"]},
    ]
    headers = {"Authorization": f"Bearer {demo.operator_token}"}
    async with httpx.AsyncClient(base_url=demo.base_url, headers=headers, timeout=10) as operator:
        defined = await operator.put("/v1/agents/ops", json={"human_input": {"escalation": plan}})
        assert defined.status_code == 200, defined.text
        added = await cli("approvers", "add", "ops", "web:bob", "--json")
        kept = (await operator.get("/v1/agents/ops")).json()["human_input"]
    assert added.code == 0 and kept["approvers"] == ["web:bob"]
    assert kept["escalation"] == plan


async def test_approvers_need_an_operator_token(cli: Cli) -> None:
    ran = await cli("approvers", "add", "ops", "web:bob", token="agent")
    assert ran.code == 4 and "operator token" in ran.err


async def test_a_malformed_identity_is_a_usage_error(cli: Cli) -> None:
    ran = await cli("approvers", "add", "ops", "bob")
    assert ran.code == 2 and "<platform>:<id>" in ran.err


def test_no_gateway_listening_exits_3(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.support.redis_server import free_port

    monkeypatch.setenv("THREADGATE_TOKEN", "whatever")
    code = main(["prompts", "list", "--url", f"http://127.0.0.1:{free_port()}"])
    assert code == 3
    assert "cannot reach the gateway" in capsys.readouterr().err
