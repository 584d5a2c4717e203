"""Forms and URL steps on Discord without a connection: their buttons, a form's pages as modals within
Discord's limits, what a submitted page answers, and the answered form's audit item. Pure functions."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from channels.discord.choices import Refused
from channels.discord.control_ids import Action, ControlId
from channels.discord.forms import FormPrompt, check_control, page_answers, page_form, prompt_view
from channels.discord.render import item_text, render_item
from gateway.base.models import Answer, Prompt, PromptState
from gateway.rules.render import pending_prompt_item, resolved_item, settled_prompt_item
from tests.channels.test_discord_forms import CONNECT, DEPLOY, LONG
from tests.fakes.discord import form_problem, message_problem
from tests.support.new_kinds import prompt_of

PROMPT_ID = "prm_01J0000000000000000000FORM"
DEPLOY_PROMPT = prompt_of(DEPLOY, "discord:1")
LONG_PROMPT = prompt_of(LONG, "discord:1")
CONNECT_PROMPT = prompt_of(CONNECT, "discord:1")


def form_of(prompt: Prompt) -> FormPrompt:
    form = FormPrompt.of_metadata(pending_prompt_item(prompt).metadata)
    assert form is not None
    return form


def button(label: str, style: int, **target: str) -> dict[str, Any]:
    return {"type": 2, "style": style, "disabled": False, "label": label, **target}


def test_a_form_is_posted_with_fill_in_and_decline_buttons() -> None:
    rows = prompt_view(form_of(DEPLOY_PROMPT)).to_components()

    assert rows == [
        {
            "type": 1,
            "components": [
                button("Fill in…", 1, custom_id=f"tg:fill:{PROMPT_ID}:0"),
                button("Decline", 4, custom_id=f"tg:decline:{PROMPT_ID}"),
            ],
        }
    ]
    assert message_problem({"components": rows}) is None


def test_a_url_step_is_posted_with_a_link_done_and_decline() -> None:
    rows = prompt_view(form_of(CONNECT_PROMPT)).to_components()

    assert rows == [
        {
            "type": 1,
            "components": [
                button("Open the page", 5, url="https://example.com/connect"),
                button("Done", 3, custom_id=f"tg:done:{PROMPT_ID}"),
                button("Decline", 4, custom_id=f"tg:decline:{PROMPT_ID}"),
            ],
        }
    ]
    assert message_problem({"components": rows}) is None


def test_a_link_longer_than_a_link_button_takes_stays_in_the_text_only() -> None:
    long_link = prompt_of({**CONNECT, "url": "https://example.com/" + "a" * 600}, "discord:1")
    rows = prompt_view(form_of(long_link)).to_components()

    assert [control["label"] for control in rows[0]["components"]] == ["Done", "Decline"]


def test_a_form_page_is_a_modal_of_typed_inputs_filled_with_what_was_given() -> None:
    modal = page_form(form_of(DEPLOY_PROMPT), 0, {"env": ["Staging"], "replicas": ["12"]}).to_dict()

    def option(label: str, value: str, chosen: bool = False) -> dict[str, Any]:
        return {"label": label, "value": value, "default": chosen}

    def select(index: int, low: int, high: int, placeholder: str, *options: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": 3,
            "custom_id": f"field:{index}",
            "min_values": low,
            "max_values": high,
            "disabled": False,
            "required": low > 0,
            "placeholder": placeholder,
            "options": list(options),
        }

    def text(index: int, required: bool, placeholder: str, value: str | None = None) -> dict[str, Any]:
        given = {} if value is None else {"value": value}
        return {
            "type": 4,
            "style": 1,
            "label": None,
            "custom_id": f"field:{index}",
            "required": required,
            "placeholder": placeholder,
            **given,
            "max_length": 4000,
        }

    assert modal == {
        "custom_id": f"tg:page:{PROMPT_ID}:0",
        "title": "Deploy settings",
        "components": [
            {
                "type": 18,
                "label": "Environment",
                "component": select(
                    0, 1, 1, "Choose one", option("Staging", "0", True), option("Production", "1")
                ),
            },
            {
                "type": 18,
                "label": "Replicas",
                "component": text(1, True, "a whole number, at least 1, at most 10", "12"),
            },
            {
                "type": 18,
                "label": "Notify the team",
                "component": select(2, 0, 1, "Choose one", option("Yes", "0", True), option("No", "1")),
            },
            {
                "type": 18,
                "label": "Regions",
                "component": select(
                    3, 0, 2, "Choose any number", option("eu", "0"), option("us", "1"), option("ap", "2")
                ),
                "description": "pick any, at most 2",
            },
            {"type": 18, "label": "Owner", "component": text(4, False, "an email address")},
        ],
    }
    assert form_problem(modal) is None


def test_a_form_of_more_than_five_fields_is_asked_in_pages_of_five() -> None:
    form = form_of(LONG_PROMPT)
    pages = [page_form(form, page, {}).to_dict() for page in range(form.pages)]

    assert [page["title"] for page in pages] == ["New service (1/2)", "New service (2/2)"]
    assert [[field["label"] for field in page["components"]] for page in pages] == [
        ["Field 1", "Field 2", "Field 3", "Field 4", "Field 5"],
        ["Field 6", "Field 7"],
    ]
    assert all(form_problem(page) is None for page in pages)
    assert "placeholder" not in pages[0]["components"][0]["component"]  # plain text: nothing to add


def test_a_submitted_page_answers_as_people_see_it() -> None:
    submitted: dict[str, str | list[str]] = {
        "field:0": ["1"],
        "field:1": " 3 ",
        "field:2": ["1"],
        "field:3": ["2", "0"],
        "field:4": "",
    }

    assert page_answers(form_of(DEPLOY_PROMPT), 0, submitted) == {
        "env": ["Production"],
        "replicas": [" 3 "],  # verbatim: the core's validator reads it
        "notify": ["No"],
        "regions": ["eu", "ap"],
        "owner": [],
    }


@pytest.mark.parametrize("forged", [{"field:0": ["7"]}, {"field:0": "Production"}, {"field:1": ["3"]}])
def test_a_page_value_the_modal_never_offered_is_refused(forged: dict[str, Any]) -> None:
    with pytest.raises(Refused):
        page_answers(form_of(DEPLOY_PROMPT), 0, forged)


@pytest.mark.parametrize(
    ("prompt", "control"),
    [
        (DEPLOY_PROMPT, ControlId(Action.DONE, PROMPT_ID)),
        (DEPLOY_PROMPT, ControlId(Action.FILL, PROMPT_ID, 1)),
        (LONG_PROMPT, ControlId(Action.PAGE, PROMPT_ID, 2)),
        (CONNECT_PROMPT, ControlId(Action.FILL, PROMPT_ID, 0)),
    ],
)
def test_a_control_its_prompt_could_not_carry_is_refused(prompt: Prompt, control: ControlId) -> None:
    with pytest.raises(Refused):
        check_control(prompt, control)


def answered(prompt: Prompt) -> Prompt:
    shown = [["Production"], ["3"], ["Yes"], [], ["ada@example.com"]]
    answers = [
        Answer(question=question.question, question_id=question.id or "", answer=answer)
        for question, answer in zip(prompt.questions, shown, strict=True)
    ]
    content = {"env": "prod", "replicas": 3, "notify": True, "owner": "ada@example.com"}
    settled_at = datetime(2026, 1, 1, tzinfo=UTC)
    return prompt.model_copy(
        update={
            "prompt_state": PromptState.ANSWERED,
            "answers": answers,
            "content": content,
            "settled_at": settled_at,
        }
    )


def test_an_answered_forms_audit_item_reads_one_line_per_field() -> None:
    [message] = render_item(resolved_item(answered(DEPLOY_PROMPT)))

    assert message.content == (
        "✓ Answered:\n"
        "Environment: Production\n"
        "Replicas: 3\n"
        "Notify the team: Yes\n"
        "Regions: —\n"
        "Owner: ada@example.com"
    )


def test_an_answered_forms_own_message_ends_with_the_same_lines() -> None:
    text = item_text(settled_prompt_item(answered(DEPLOY_PROMPT)))

    assert text.startswith("Deploy settings\n\n1. Environment (env) — string: pick one, required\n")
    assert text.endswith(
        "optional\n\n✓ Answered:\nEnvironment: Production\nReplicas: 3\nNotify the team: Yes\nRegions: —\n"
        "Owner: ada@example.com"
    )


def test_a_declined_forms_audit_item_is_the_cores_text() -> None:
    declined = DEPLOY_PROMPT.model_copy(
        update={"prompt_state": PromptState.CANCELLED, "reason": "the person declined to answer"}
    )
    item = resolved_item(declined)

    assert item_text(item) == item.text == "✗ Cancelled: the person declined to answer"
