"""The pure conversions: what a person sees for a tool call, and answers in the shape a tool expects."""

from __future__ import annotations

import importlib.util
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gateway.base.models import Answer, Prompt, PromptKind, PromptRequest, PromptState, Question
from gateway.client.target import repo_name, session_header, session_key
from gateway.integrations.prompts import answers_by_question, approval_question, ask_user_questions

NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("tool", "tool_input", "question"),
    [
        ("Bash", {"command": "make test"}, "Allow Bash to run `make test`?"),
        ("Bash", {"command": "ls", "description": "List files"}, "Allow Bash to run `ls`?\nList files"),
        (
            "apply_patch",
            {"command": "*** Begin Patch\n+x"},
            "Allow apply_patch to run this?\n```\n*** Begin Patch\n+x\n```",
        ),
        ("Write", {"file_path": "/etc/hosts", "content": "x"}, "Allow Write on /etc/hosts?"),
        ("mcp__db__drop", {"database": "staging"}, 'Allow mcp__db__drop with {"database": "staging"}?'),
        ("ExitPlanMode", {}, "Allow ExitPlanMode?"),
    ],
)
def test_approval_question_shows_the_call(tool: str, tool_input: dict[str, object], question: str) -> None:
    assert approval_question(tool, tool_input) == question


def test_ask_user_questions_are_valid_prompt_questions() -> None:
    tool_input = {
        "questions": [
            {
                "question": "Which sections?",
                "header": "Sections",
                "multiSelect": True,
                "options": [{"label": "KPI cards", "description": "numbers"}, {"label": "Table"}],
            }
        ]
    }
    request = PromptRequest.model_validate(
        {"kind": "ask_user_question", "questions": ask_user_questions(tool_input)}
    )
    (question,) = request.questions
    assert (question.header, question.multi_select, question.labels) == (
        "Sections",
        True,
        ["KPI cards", "Table"],
    )


def test_ask_user_question_without_questions_is_refused() -> None:
    with pytest.raises(ValueError, match="no questions"):
        ask_user_questions({"questions": []})


def test_answers_join_several_labels_with_comma_space() -> None:
    prompt = Prompt(
        prompt_id="prm_1",
        run_id="run_1",
        thread_id="web:ops",
        agent="claude-code",
        kind=PromptKind.ASK_USER_QUESTION,
        prompt_state=PromptState.ANSWERED,
        questions=[Question(id="q1", question="Which?", options=[])],
        created_at=NOW,
        expires_at=NOW,
        answers=[Answer(question="Which?", question_id="q1", answer=["Introduction", "Conclusion"])],
    )
    assert answers_by_question(prompt) == {"Which?": "Introduction, Conclusion"}


def test_session_key_keeps_only_allowed_characters() -> None:
    assert session_key("claude-code", "a b/c") == "claude-code:a-b-c"


def test_header_names_the_repository_holding_the_working_folder(tmp_path: Path) -> None:
    (tmp_path / "shop" / ".git").mkdir(parents=True)
    (tmp_path / "shop" / "src" / "api").mkdir(parents=True)
    assert repo_name(str(tmp_path / "shop" / "src" / "api")) == "shop"
    assert (
        session_header("Codex", str(tmp_path / "shop" / "src"), "019a4c2e-7b1d")
        == "Codex in shop, session 019a4c2e"
    )


def test_the_sdk_example_loads_and_wires_the_callback() -> None:
    path = Path(__file__).parents[2] / "examples" / "claude_agent_sdk_approvals.py"
    spec = importlib.util.spec_from_file_location("claude_agent_sdk_approvals", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.gateway_can_use_tool.__module__ == "gateway.integrations.claude_agent_sdk"
