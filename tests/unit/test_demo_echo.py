"""The demo agent says back each answer as one short sentence, never as raw JSON."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from gateway.base.models import Prompt
from gateway.demo.agent import TOUR, echo_text

STEPS = {step.title: step for step in TOUR}
NOW = datetime(2025, 1, 31, 9, 30, tzinfo=UTC)


def settled(title: str, answers: list[list[str]], **extra: Any) -> Prompt:
    step = STEPS[title]
    questions = step.questions or [{"question": "Set up the new project."}]
    return Prompt.model_validate(
        {
            "prompt_id": "prm_1",
            "run_id": "run_1",
            "thread_id": "web:lobby",
            "agent": "demo",
            "kind": step.kind,
            "prompt_state": "answered",
            "questions": questions,
            "created_at": NOW,
            "expires_at": NOW,
            "answered_by": "web:bob",
            "answers": [
                {
                    "question": questions[min(index, len(questions) - 1)]["question"],
                    "question_id": f"q{index + 1}",
                    "answer": answer,
                }
                for index, answer in enumerate(answers)
            ],
            **extra,
        }
    )


@pytest.mark.parametrize(
    ("title", "answers", "extra", "said"),
    [
        ("an approval of a tool call", [["Approve"]], {}, "Approved by web:bob."),
        ("an approval of a tool call", [["Deny"]], {}, "Denied by web:bob."),
        ("an approval of a tool call", [["Deny"]], {"note": "deny"}, "Denied by web:bob."),
        (
            "an approval of a tool call",
            [["Deny"]],
            {"note": "snapshot it first"},
            'Denied by web:bob: "snapshot it first".',
        ),
        (
            "an approval you can edit",
            [["Approve"]],
            {
                "tool_call": STEPS["an approval you can edit"].tool_call,
                "approved_call": STEPS["an approval you can edit"].tool_call,
            },
            "Approved by web:bob.",
        ),
        (
            "an approval you can edit",
            [["Approve"]],
            {
                "tool_call": STEPS["an approval you can edit"].tool_call,
                "approved_call": {
                    "name": "deploy",
                    "arguments": {"service": "web", "version": "2.4.0", "replicas": 2},
                },
            },
            "Approved by web:bob as edited: I ran deploy with service = web, version = 2.4.0, replicas = 2.",
        ),
        ("a single-select question", [["staging"]], {}, "web:bob chose staging."),
        ("a multi-select question", [["KPI cards", "Chart"]], {}, "web:bob chose KPI cards and Chart."),
        (
            "a multi-select question",
            [["KPI cards", "Table", "Map"]],
            {},
            "web:bob chose KPI cards, Table and Map.",
        ),
        ("a multi-select question", [[]], {}, "web:bob chose nothing."),
        ("a free-text question", [["Blue Falcon"]], {}, 'web:bob answered: "Blue Falcon".'),
        (
            "a form of three questions",
            [["Postgres"], ["KPI cards", "Table"], ["dark theme"]],
            {},
            "web:bob answered: Source = Postgres; Sections = KPI cards, Table; Style = dark theme.",
        ),
        (
            "a form of typed fields",
            [["Orion"]],
            {"content": {"project": "Orion", "replicas": 3, "public": False, "alerts": ["email", "pager"]}},
            "Form from web:bob: project = Orion, replicas = 3, public = no, alerts = email, pager.",
        ),
        ("a step on another site", [["done"]], {}, "web:bob marked the step done."),
    ],
)
def test_each_answer_is_said_back_as_one_readable_sentence(
    title: str, answers: list[list[str]], extra: dict[str, Any], said: str
) -> None:
    text = echo_text(STEPS[title], settled(title, answers, **extra))
    assert text == said
    assert "{" not in text and "question_id" not in text


def test_a_cancelled_prompt_says_why() -> None:
    prompt = settled("a single-select question", [["staging"]]).model_copy(
        update={"prompt_state": "cancelled", "answers": None, "reason": "expired"}
    )
    assert echo_text(STEPS["a single-select question"], prompt) == (
        "The prompt for a single-select question was cancelled (expired). Moving on."
    )


@pytest.mark.parametrize(
    "title", ["a form of typed fields", "a step on another site", "a single-select question"]
)
def test_a_declined_prompt_says_the_person_declined_it_not_that_it_was_cancelled(title: str) -> None:
    prompt = settled(title, [["x"]]).model_copy(
        update={
            "prompt_state": "cancelled",
            "answers": None,
            "reason": "the person declined to answer",
            "reason_code": "declined",
        }
    )
    assert echo_text(STEPS[title], prompt) == f"You declined {title}, so I'm leaving it out. Moving on."
