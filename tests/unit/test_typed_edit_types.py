"""Without an ``input_schema``, an edit keeps each argument's JSON type: a number stays a number (a whole
one stays whole), true or false stays a boolean, text stays text, a list or an object stays one; null takes
anything. Typed lines, an edit's JSON and a control's arguments are held to it alike."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.base.models import APPROVE
from gateway.rules.replies import ReplyAction, read_reply
from gateway.rules.typed_edits import form_arguments
from gateway.rules.verdicts import EditRefused, check_edit
from tests.unit.test_storable import editable

CALL = {
    "service": "api",
    "replicas": 5,
    "ratio": 0.5,
    "canary": True,
    "regions": ["eu"],
    "env": {"STAGE": "ci"},
    "owner": None,
}


@pytest.mark.parametrize(
    ("text", "name", "value"),
    [
        ("replicas: 7", "replicas", 7),
        ("ratio: 1", "ratio", 1),
        ("ratio: 0.25", "ratio", 0.25),
        ("canary: false", "canary", False),
        ("service: 5", "service", "5"),
        ('regions: ["eu", "us"]', "regions", ["eu", "us"]),
        ('env: {"STAGE": "prod"}', "env", {"STAGE": "prod"}),
        ("owner: alice", "owner", "alice"),
        ('edit {"replicas": 3}', "replicas", 3),
        ('edit {"owner": 3}', "owner", 3),
    ],
)
def test_a_value_of_the_arguments_type_is_taken(text: str, name: str, value: Any) -> None:
    reading = read_reply(editable(dict(CALL)), text, None)
    assert reading.action is ReplyAction.ANSWER, reading.notice
    assert reading.edited is not None
    assert reading.edited.arguments[name] == value
    assert type(reading.edited.arguments[name]) is type(value)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("replicas: many", "replicas"),
        ("replicas: 2.5", "replicas"),
        ("replicas: true", "replicas"),
        ('replicas: "5"', "replicas"),
        ("replicas: [5]", "replicas"),
        ("ratio: fast", "ratio"),
        ("ratio: false", "ratio"),
        ("canary: yes", "canary"),
        ("canary: 1", "canary"),
        ("regions: eu", "regions"),
        ('regions: {"eu": 1}', "regions"),
        ("env: prod", "env"),
        ('edit {"replicas": "many"}', "replicas"),
        ('edit {"canary": "false"}', "canary"),
        ('edit {"service": 5}', "service"),
        ('edit {"replicas": null}', "replicas"),
    ],
)
def test_a_value_of_another_type_is_not_taken_naming_the_argument(text: str, name: str) -> None:
    reading = read_reply(editable(dict(CALL)), text, None)
    assert reading.action is ReplyAction.INVALID
    assert reading.edited is None
    assert [error.property for error in reading.errors] == [name]
    assert reading.notice is not None and name in reading.notice


@pytest.mark.parametrize(
    ("fields", "taken"),
    [
        ({"replicas": ["9"]}, True),
        ({"replicas": ["nine"]}, False),
        ({"canary": ["false"]}, True),
        ({"canary": ["no"]}, False),
        ({"regions": ['["us"]']}, True),
        ({"regions": ["us"]}, False),
    ],
)
def test_a_cards_inputs_keep_the_types_too(fields: dict[str, list[str]], taken: bool) -> None:
    prompt = editable(dict(CALL))
    arguments = form_arguments(prompt, fields)
    if taken:
        assert check_edit(prompt, arguments).arguments == arguments
    else:
        with pytest.raises(EditRefused) as refused:
            check_edit(prompt, arguments)
        assert [error.field for error in refused.value.errors] == list(fields)
    reading = read_reply(prompt, APPROVE, None, arguments=arguments)
    assert (reading.action is ReplyAction.ANSWER) is taken


def test_a_schema_decides_types_where_there_is_one() -> None:
    schema = {"type": "object", "properties": {"replicas": {"type": ["integer", "string"]}}}
    prompt = editable(dict(CALL), schema)
    assert check_edit(prompt, {**CALL, "replicas": "many"}).arguments["replicas"] == "many"
