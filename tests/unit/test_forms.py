"""Flat forms (seed 002's context.ask, MCP elicitation's form mode): the schema subset, the validator."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from gateway import forms
from gateway.models import PromptKind, PromptRequest
from gateway.render import form_or_url_text

DEPLOY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "env": {
            "type": "string",
            "title": "Environment",
            "enum": ["stg", "prod"],
            "enumNames": ["Staging", "Production"],
        },
        "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 10, "default": 2},
        "notify": {"type": "boolean", "title": "Notify the team"},
        "email": {"type": "string", "format": "email", "description": "Who gets the report"},
        "regions": {
            "type": "array",
            "items": {"anyOf": [{"const": "eu", "title": "Europe"}, {"const": "us", "title": "America"}]},
            "minItems": 1,
        },
        "note": {"type": "string", "minLength": 3, "maxLength": 20},
        "ratio": {"type": "number", "minimum": 0, "maximum": 1},
        "tier": {
            "type": "string",
            "oneOf": [{"const": "gold", "title": "Gold"}, {"const": "free", "title": "Free"}],
        },
    },
    "required": ["env", "replicas"],
}
FIELDS = forms.check_schema(DEPLOY_SCHEMA)
BY_NAME = {field.name: field for field in FIELDS}


def form(schema: dict[str, Any], message: str = "Deploy settings") -> PromptRequest:
    return PromptRequest.model_validate({"kind": "form", "message": message, "requested_schema": schema})


def one(prop: dict[str, Any], name: str = "field") -> dict[str, Any]:
    return {"type": "object", "properties": {name: prop}}


@pytest.mark.parametrize(
    ("prop", "named"),
    [
        ({"type": "object", "properties": {}}, "type must be one of"),
        ({"type": "string", "pattern": "^a"}, "pattern is not allowed on a string field"),
        ({"type": "string", "format": "ipv4"}, "format must be one of"),
        ({"type": "array", "items": {"type": "integer"}}, "multi-select of string enums"),
        ({"type": "string", "enum": ["a", "b"], "enumNames": ["A"]}, "enumNames must be a list"),
        ({"type": "string", "enum": [1, 2]}, "enum must be a non-empty list of strings"),
        ({"type": "integer", "minimum": "one"}, "minimum must be a number"),
        ({"type": "integer", "default": "two"}, "its default must be a whole number"),
        ({"type": "string", "enum": [str(n) for n in range(30)]}, "at most 25 choices"),
        ({"type": "number", "minLength": 2}, "minLength is not allowed on a number field"),
    ],
)
def test_a_schema_outside_the_flat_subset_is_refused_naming_the_property(
    prop: dict[str, Any], named: str
) -> None:
    with pytest.raises(ValidationError) as raised:
        form(one(prop, name="age"))
    text = str(raised.value)
    assert "property 'age'" in text and named in text


@pytest.mark.parametrize(
    ("schema", "named"),
    [
        ({"type": "object", "properties": {}}, "1 to 10 properties"),
        (
            {"type": "object", "properties": {f"p{n}": {"type": "string"} for n in range(11)}},
            "1 to 10 properties",
        ),
        ({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]}, "property 'b'"),
        ({"type": "object", "properties": {"a": {"type": "string"}}, "$defs": {}}, "not $defs"),
        ({"type": "array"}, "requested_schema is"),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "string", "title": "X"}, "b": {"type": "string", "title": "x"}},
            },
            "property 'b': its title repeats",
        ),
        ({"type": "object", "properties": {"bad name": {"type": "string"}}}, "property 'bad name'"),
    ],
)
def test_a_malformed_form_is_refused(schema: dict[str, Any], named: str) -> None:
    with pytest.raises(ValidationError) as raised:
        form(schema)
    assert named in str(raised.value)


def test_a_form_has_one_question_per_property_with_options_for_enums_and_booleans() -> None:
    request = form(DEPLOY_SCHEMA)
    assert request.questions is not None
    shape = [(q.id, q.question, q.labels, q.multi_select) for q in request.questions]
    assert shape[:5] == [
        ("env", "Environment", ["Staging", "Production"], False),
        ("replicas", "Replicas", [], False),
        ("notify", "Notify the team", ["Yes", "No"], False),
        ("email", "email", [], False),
        ("regions", "regions", ["Europe", "America"], True),
    ]


def test_form_questions_are_derived_not_given() -> None:
    with pytest.raises(ValidationError, match="questions are derived"):
        PromptRequest.model_validate(
            {
                "kind": "form",
                "message": "m",
                "requested_schema": one({"type": "string"}),
                "questions": [{"question": "q"}],
            }
        )


@pytest.mark.parametrize(
    ("content", "errors"),
    [
        ({"env": "prod", "replicas": 3}, []),
        ({"env": "prod", "replicas": 3.0}, []),
        ({}, [("env", "is required"), ("replicas", "is required")]),
        ({"env": "dev", "replicas": 3}, [("env", "must be one of: Staging, Production")]),
        ({"env": "stg", "replicas": 11}, [("replicas", "must be at most 10 (maximum 10)")]),
        ({"env": "stg", "replicas": 0}, [("replicas", "must be at least 1 (minimum 1)")]),
        ({"env": "stg", "replicas": 2.5}, [("replicas", "must be a whole number (integer)")]),
        ({"env": "stg", "replicas": True}, [("replicas", "must be a whole number (integer)")]),
        ({"env": "stg", "replicas": 1, "notify": "yes"}, [("notify", "must be true or false (yes or no)")]),
        (
            {"env": "stg", "replicas": 1, "email": "nope"},
            [("email", "must be an email address (format email)")],
        ),
        ({"env": "stg", "replicas": 1, "regions": []}, [("regions", "must pick at least 1 (minItems 1)")]),
        (
            {"env": "stg", "replicas": 1, "regions": ["eu", "mars"]},
            [("regions", "may only hold: Europe, America")],
        ),
        (
            {"env": "stg", "replicas": 1, "note": "hi"},
            [("note", "must have at least 3 characters (minLength 3)")],
        ),
        ({"env": "stg", "replicas": 1, "ratio": 1.5}, [("ratio", "must be at most 1 (maximum 1)")]),
        ({"env": "stg", "replicas": 1, "extra": 1}, [("extra", "is not a field of this form")]),
    ],
)
def test_content_is_validated_by_type_constraint_and_required(
    content: dict[str, Any], errors: list[tuple[str, str]]
) -> None:
    _accepted, found = forms.validate_content(FIELDS, content)
    assert [(error.property, error.problem) for error in found] == errors


def test_an_integer_given_as_a_whole_float_is_kept_as_an_integer() -> None:
    accepted, _ = forms.validate_content(FIELDS, {"env": "prod", "replicas": 3.0})
    assert accepted == {"env": "prod", "replicas": 3} and isinstance(accepted["replicas"], int)


@pytest.mark.parametrize(
    ("name", "text", "value", "problem"),
    [
        ("env", "2", "prod", None),
        ("env", "staging", "stg", None),
        ("env", "PROD", "prod", None),
        ("env", "3", None, "must be one of: Staging, Production (by number or name)"),
        ("replicas", " 4 ", 4, None),
        ("replicas", "four", None, "must be a whole number (integer)"),
        ("replicas", "12", None, "must be at most 10 (maximum 10)"),
        ("notify", "yes", True, None),
        ("notify", "No", False, None),
        ("notify", "2", False, None),
        ("notify", "maybe", None, "must be yes or no"),
        ("regions", "1, 2", ["eu", "us"], None),
        ("regions", "america", ["us"], None),
        ("regions", "3", None, "may only hold: Europe, America (by number or name)"),
        ("ratio", "0.25", 0.25, None),
        ("ratio", "nan", None, "must be a number"),
        ("tier", "gold", "gold", None),
        ("email", "ada@example.com", "ada@example.com", None),
    ],
)
def test_typed_text_becomes_a_checked_value(name: str, text: str, value: Any, problem: str | None) -> None:
    assert forms.parse_text(BY_NAME[name], text) == (value, problem)


def test_name_value_lines_name_fields_by_name_or_title() -> None:
    assert forms.parse_lines(FIELDS, "Environment: prod\nreplicas: 3\n") == {"env": "prod", "replicas": "3"}
    assert forms.parse_lines(FIELDS, "just some text") is None
    assert forms.parse_lines(FIELDS, "env: prod\nwhat: else") is None


def test_values_are_shown_as_people_see_them() -> None:
    assert forms.shown(BY_NAME["env"], "prod") == ["Production"]
    assert forms.shown(BY_NAME["notify"], True) == ["Yes"]
    assert forms.shown(BY_NAME["regions"], ["eu", "us"]) == ["Europe", "America"]
    assert forms.shown(BY_NAME["replicas"], 3) == ["3"]
    assert forms.shown(BY_NAME["email"], None) == []


def test_a_form_is_rendered_as_its_message_then_each_field_with_number_type_constraints_and_options() -> None:
    text = form_or_url_text(PromptKind.FORM, "Deploy settings", DEPLOY_SCHEMA, None)
    assert text.startswith(
        "Deploy settings\n\n"
        "1. Environment (env) — string: pick one, required\n"
        "     1. Staging\n"
        "     2. Production\n\n"
        "2. Replicas (replicas) — integer: a whole number, at least 1, at most 10, default 2, required\n\n"
        "3. Notify the team (notify) — boolean: pick one, optional\n"
        "     1. Yes\n"
        "     2. No\n\n"
        "4. email — string: an email address, optional\n"
        "   Who gets the report\n\n"
        "5. regions — array: pick any, at least 1, optional\n"
    )


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://example.com/connect", True),
        ("http://127.0.0.1:8787/setup", True),
        ("http://localhost/setup", True),
        ("http://[::1]/setup", True),
        ("http://example.com/connect", False),
        ("ftp://example.com/x", False),
        ("javascript:alert(1)", False),
        ("https://", False),
    ],
)
def test_a_url_step_takes_https_or_http_to_loopback_only(url: str, ok: bool) -> None:
    payload = {"kind": "url", "message": "Connect your GitHub account", "url": url}
    if ok:
        request = PromptRequest.model_validate(payload)
        assert request.questions is not None and request.questions[0].id == "q1"
        assert form_or_url_text(PromptKind.URL, "Connect your GitHub account", None, url).endswith(url)
    else:
        with pytest.raises(ValidationError, match="url must be https"):
            PromptRequest.model_validate(payload)
