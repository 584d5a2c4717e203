"""Flat forms (seed 002's context.ask, MCP elicitation's form mode): the schema subset, the validator."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from gateway.base import forms
from gateway.base.models import PromptKind, PromptRequest
from gateway.rules.render import form_or_url_text

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


# Hostile values: bounded work, no exception, one reading ----------------------------------------


STRING = forms.check_schema(one({"type": "string"}))[0]
SHORT = forms.check_schema(one({"type": "string", "maxLength": 8}))[0]
EMAIL = BY_NAME["email"]


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        (STRING, "x" * 4097, "must have at most 4096 characters"),
        (EMAIL, "a@" + "." * 5000 + "@", "must have at most 4096 characters"),
        (BY_NAME["env"], "p" * 5000, "must have at most 4096 characters"),
        (SHORT, "@" * 9, "must have at most 8 characters (maxLength 8)"),
    ],
)
def test_a_value_over_its_length_cap_gets_the_max_length_problem_before_any_other_check(
    field: forms.FormField, value: str, problem: str
) -> None:
    assert forms.check_value(field, value) == problem
    assert forms.parse_text(field, value) == (None, problem)


def test_every_field_type_caps_typed_text_before_parsing_it() -> None:
    for field in FIELDS:
        assert forms.parse_text(field, "1" * 5000) == (None, _cap_problem(field)), field.name
        assert forms.value_from_answer(field, ["9" * 5000]) == (None, _cap_problem(field)), field.name


def _cap_problem(field: forms.FormField) -> str:
    limit = forms.value_limit(field)
    suffix = f" (maxLength {limit})" if field.max_length is not None else ""
    return f"must have at most {limit} characters{suffix}"


def test_surrounding_white_space_does_not_count_against_the_cap() -> None:
    assert forms.parse_text(SHORT, "  12345678 \n") == ("12345678", None)


@pytest.mark.parametrize(
    ("prop", "named"),
    [
        ({"type": "string", "maxLength": 4097}, "maxLength must be at most 4096"),
        (
            {"type": "string", "enum": ["x" * 4097], "enumNames": ["Big"]},
            "each choice's value has at most 4096 characters",
        ),
    ],
)
def test_a_schema_cannot_lift_the_value_cap(prop: dict[str, Any], named: str) -> None:
    with pytest.raises(ValidationError) as raised:
        form(one(prop, name="big"))
    assert "property 'big'" in str(raised.value) and named in str(raised.value)


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("ada@example.com", True),
        ("a.b+tag@mail.example.co.uk", True),
        ("ada@example", False),
        ("ada@.com", False),
        ("ada@com.", False),
        ("@example.com", False),
        ("ada@@example.com", False),
        ("ada@exa@mple.com", False),
        ("ada @example.com", False),
        ("ada@example.com\n", False),
        ("ada@exa\u2003mple.com", False),
        ("a@" + "." * 3000 + "@", False),
    ],
)
def test_email_is_one_at_sign_no_white_space_and_a_dot_inside_the_domain(value: str, ok: bool) -> None:
    assert (forms.check_value(EMAIL, value) is None) is ok


DAY = forms.check_schema(one({"type": "string", "format": "date"}))[0]
MOMENT = forms.check_schema(one({"type": "string", "format": "date-time"}))[0]


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("2025-01-31", True),
        ("2024-02-29", True),
        ("2025-02-29", False),  # not a calendar day
        ("2025-13-01", False),
        ("0000-01-01", False),
        ("2025-W01-1", False),  # ISO week date
        ("2025-W01", False),
        ("20250131", False),  # ISO basic format
        ("2025-031", False),  # ISO ordinal date
        ("2025-1-31", False),
        ("２０２５-01-31", False),  # fullwidth digits
        ("2025-01-31T00:00:00Z", False),
    ],
)
def test_a_date_is_an_rfc_3339_full_date_only(value: str, ok: bool) -> None:
    assert (forms.check_value(DAY, value) is None) is ok


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("2025-01-31T09:30:00Z", True),
        ("2025-01-31t09:30:00z", True),
        ("2025-01-31T09:30:00.123456789+01:00", True),
        ("2025-01-31T23:59:59-12:00", True),
        ("20250131T093000+0100", False),  # ISO basic format
        ("2025-W01-1T09:30:00Z", False),
        ("2025-01-31T09:30:00", False),  # no offset
        ("2025-01-31 09:30:00Z", False),  # RFC 3339 allows it in prose only; JSON Schema takes T
        ("2025-01-31T09:30Z", False),
        ("2025-01-31T09:30:00+0100", False),
        ("2025-01-31T09:30:00+01", False),
        ("2025-01-31T24:00:00Z", False),
        ("2025-01-31T09:60:00Z", False),
        ("2025-01-31T09:30:00.Z", False),
        ("2025-01-31T09:30:00+24:00", False),
        ("2025-02-30T09:30:00Z", False),
        ("2025-01-31T09:30:00Z" + "0" * 100, False),
    ],
)
def test_a_date_time_is_an_rfc_3339_date_time_only(value: str, ok: bool) -> None:
    assert (forms.check_value(MOMENT, value) is None) is ok


def test_a_uri_that_urlsplit_cannot_read_is_a_problem_not_an_exception() -> None:
    uri = forms.check_schema(one({"type": "string", "format": "uri"}))[0]
    assert forms.check_value(uri, "http://[abc/") == "must be a URI such as https://example.com (format uri)"
    assert forms.check_value(uri, "https://example.com/x") is None


RANGE = "must be a number between -1.8e308 and 1.8e308"


@pytest.mark.parametrize(
    "value", [10**400, -(10**400), 2**1024, float("inf")], ids=["1e400", "-1e400", "2^1024", "inf"]
)
@pytest.mark.parametrize("name", ["replicas", "ratio"])
def test_numbers_past_float_range_are_a_problem_not_an_overflow(name: str, value: float) -> None:
    _accepted, errors = forms.validate_content(FIELDS, {"env": "stg", "replicas": 1, name: value})
    assert [(error.property, error.problem) for error in errors] == [(name, RANGE)]


@pytest.mark.parametrize("text", ["1e400", "-1e400", "9" * 400, "inf"])
def test_typed_numbers_past_float_range_are_refused(text: str) -> None:
    assert forms.parse_text(BY_NAME["ratio"], text) == (None, RANGE)


@pytest.mark.parametrize("key", ["minimum", "maximum", "default"])
@pytest.mark.parametrize("value", [10**400, -(10**400)], ids=["1e400", "-1e400"])
def test_a_schema_number_past_float_range_is_refused_naming_the_property(key: str, value: int) -> None:
    with pytest.raises(ValidationError) as raised:
        form(one({"type": "integer", key: value}, name="count"))
    assert "property 'count'" in str(raised.value) and "1.8e308" in str(raised.value)


CHOICES_LIKE_NUMBERS = forms.check_schema(
    {
        "type": "object",
        "properties": {
            "pick": {"type": "string", "enum": ["2", "1"]},
            "named": {"type": "string", "enum": ["a", "b", "c"], "enumNames": ["3", "x", "y"]},
            "many": {"type": "array", "items": {"enum": ["2", "1", "7"]}},
        },
    }
)
NUMBERISH = {field.name: field for field in CHOICES_LIKE_NUMBERS}


@pytest.mark.parametrize(
    ("name", "text", "value"),
    [
        ("pick", "1", "1"),  # the value "1", not the first choice
        ("pick", "2", "2"),
        ("named", "3", "a"),  # the title "3" wins over the third position
        ("named", "2", "b"),  # nothing reads "2": the second choice
        ("many", "1, 2", ["1", "2"]),
        ("many", "3", ["7"]),
    ],
)
def test_a_typed_number_is_a_title_or_value_before_it_is_a_position(name: str, text: str, value: Any) -> None:
    assert forms.parse_text(NUMBERISH[name], text) == (value, None)


def test_shown_answers_name_choices_by_title_or_value_never_by_position() -> None:
    env = BY_NAME["env"]
    assert forms.value_from_answer(env, ["Production"]) == ("prod", None)
    assert forms.value_from_answer(env, ["stg"]) == ("stg", None)
    assert forms.value_from_answer(env, ["2"]) == (None, "must be one of: Staging, Production")
    assert forms.value_from_answer(NUMBERISH["pick"], ["1"]) == ("1", None)
    regions = BY_NAME["regions"]
    assert forms.value_from_answer(regions, ["America", "eu"]) == (["us", "eu"], None)
    assert forms.value_from_answer(regions, ["1"]) == (None, "may only hold: Europe, America")


def test_a_multi_select_title_may_hold_commas_and_spaces() -> None:
    cities = forms.check_schema(
        one({"type": "array", "items": {"anyOf": [
            {"const": "nyc", "title": "New York, NY"}, {"const": "la", "title": "Los Angeles"}]}})
    )[0]  # fmt: skip
    assert forms.value_from_answer(cities, ["New York, NY", "Los Angeles"]) == (["nyc", "la"], None)
    assert forms.parse_text(cities, "New York, NY\nLos Angeles") == (["nyc", "la"], None)
    assert forms.parse_text(cities, "Los Angeles") == (["la"], None)


def test_name_value_lines_take_a_name_before_a_title_reading_the_same() -> None:
    clashing = [  # as stored before check_schema refused such forms
        forms.FormField("owner", "string", "team", False),
        forms.FormField("team", "string", "Team name", False),
    ]
    assert forms.parse_lines(clashing, "team: red") == {"team": "red"}
    assert forms.parse_lines(clashing, "TEAM: red\nowner: ada") == {"team": "red", "owner": "ada"}


@pytest.mark.parametrize("title", ["team", "TEAM", " Team "])
def test_a_title_that_is_another_fields_name_is_refused(title: str) -> None:
    schema = {
        "type": "object",
        "properties": {"owner": {"type": "string", "title": title}, "team": {"type": "string"}},
    }
    with pytest.raises(ValidationError) as raised:
        form(schema)
    assert "property 'owner': its title is another field's name ('team')" in str(raised.value)


def test_a_title_may_repeat_its_own_name() -> None:
    assert forms.check_schema(one({"type": "string", "title": "Field"}, name="field"))[0].title == "Field"
