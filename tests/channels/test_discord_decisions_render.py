"""An approval's forms and votes line on Discord without a connection: the forms within Discord's limits
whatever the call (the fake Discord's own checks), what a submitted edit form gives the core, and the votes
line. Pure functions."""

from __future__ import annotations

from typing import Any

import pytest

from channels.discord.approvals import (
    MAX_TEXT_INPUT,
    REST,
    EditLayout,
    edit_form,
    layout,
    read_edit,
    read_reason,
    reason_form,
)
from channels.discord.choices import Refused
from channels.discord.control_ids import NOTE_FIELD
from channels.discord.render import DiscordMessage, render_item
from gateway.base.models import Prompt, PromptKind, PromptRequest, Vote, utcnow
from gateway.rules import notices
from gateway.rules.render import message_item, votes_item
from tests.fakes.discord import form_problem

PROMPT_ID = "prm_01JABCDEFGHJKMNPQRSTVWXYZ0"


def approval(arguments: dict[str, Any], **fields: Any) -> Prompt:
    request = PromptRequest.model_validate(
        {
            "kind": "approval",
            "questions": [{"question": "Allow it? " + "q" * 1990}],
            "tool_call": {"name": "tool", "arguments": arguments},
            "editable": True,
        }
    )
    now = utcnow()
    return Prompt(
        prompt_id=PROMPT_ID,
        run_id="run_1",
        thread_id="discord:111111111111111111",
        agent="ops",
        kind=PromptKind.APPROVAL,
        questions=request.questions,
        tool_call=request.tool_call,
        editable=True,
        created_at=now,
        expires_at=now,
        **fields,
    )


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        pytest.param({"a": 1, "b": 2}, EditLayout(["a", "b"]), id="a-field-each"),
        pytest.param(
            {f"a{i}": i for i in range(5)}, EditLayout([f"a{i}" for i in range(5)]), id="five-fill-the-form"
        ),
        pytest.param(
            {f"a{i}": i for i in range(6)},
            EditLayout(["a0", "a1", "a2", "a3"], ["a4", "a5"]),
            id="six-four-and-the-rest",
        ),
        pytest.param(
            {"big": "x" * (MAX_TEXT_INPUT + 1), "small": 1},
            EditLayout(["small"], kept=["big"]),
            id="too-long",
        ),
        pytest.param(
            {f"a{i}": "y" * 1500 for i in range(8)},
            EditLayout([f"a{i}" for i in range(5)], kept=["a5", "a6", "a7"]),
            id="the-rest-too-long-together",
        ),
    ],
)
def test_the_call_is_laid_out_in_five_fields(arguments: dict[str, Any], expected: EditLayout) -> None:
    assert layout(approval(arguments)) == expected


@pytest.mark.parametrize(
    "arguments",
    [
        pytest.param({"n" * 200: "v" * 4000, "m" * 200: {"deep": ["x"] * 500}}, id="long-names-and-values"),
        pytest.param({f"arg{i}": [i] * 100 for i in range(40)}, id="forty-arguments"),
        pytest.param({}, id="no-arguments"),
    ],
)
def test_the_forms_stay_within_discords_limits(arguments: dict[str, Any]) -> None:
    prompt = approval(arguments)
    assert form_problem(reason_form(prompt).to_dict()) is None
    if arguments:
        assert form_problem(edit_form(prompt).to_dict()) is None


def test_a_submitted_edit_form_gives_each_argument_as_typed_and_the_rest_by_name() -> None:
    prompt = approval({f"a{i}": i for i in range(6)})
    submitted = {"arg:0": "10", "arg:1": "1", "arg:2": "2", "arg:3": "3", REST: '{"a5": [5], "a0": 99}'}

    # The JSON's values go as JSON; an argument's own field wins over the same name in the rest.
    assert read_edit(prompt, submitted) == {
        "a0": ["10"],
        "a1": ["1"],
        "a2": ["2"],
        "a3": ["3"],
        "a5": ["[5]"],
    }


@pytest.mark.parametrize(
    ("submitted", "notice"),
    [
        pytest.param({"arg:0": "1"}, notices.MISMATCH, id="a-field-missing"),
        pytest.param({"arg:0": ["1"], REST: "{}"}, notices.MISMATCH, id="a-select-not-a-text"),
        pytest.param(
            {**{f"arg:{i}": "1" for i in range(4)}, REST: "[]"},
            notices.edit_not_taken(notices.REST_NOT_AN_OBJECT),
            id="rest-not-an-object",
        ),
    ],
)
def test_a_submitted_edit_form_that_does_not_fit_is_refused(submitted: dict[str, Any], notice: str) -> None:
    prompt = approval({f"a{i}": i for i in range(6)})
    with pytest.raises(Refused) as refused:
        read_edit(prompt, submitted)
    assert refused.value.message == notice


def test_the_reason_is_its_field_as_typed() -> None:
    assert read_reason({NOTE_FIELD: "not today"}) == "not today"
    with pytest.raises(Refused):
        read_reason({})


def test_the_votes_item_is_one_line_with_discord_users_as_mentions() -> None:
    votes = [
        Vote(by="discord:333333333333333333", answer="Approve", at=utcnow()),
        Vote(by="web:ops-lead", answer="Approve", at=utcnow()),
    ]
    item = votes_item(approval({"a": 1}, approvals=3, votes=votes))

    assert render_item(item) == [DiscordMessage("Approved 2 of 3: <@333333333333333333>, web:ops-lead")]
    plain = message_item("Approved 1 of 2: someone")  # no votes metadata: an agent's message as it is
    assert render_item(plain) == [DiscordMessage("Approved 1 of 2: someone")]
