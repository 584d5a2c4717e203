"""A pydantic model as a flat form: each kind of field it can carry, and each it refuses at the call."""

from __future__ import annotations

import datetime
import enum
from typing import Annotated, Any, Literal

import httpx
import pytest
from pydantic import AnyUrl, BaseModel, Field

from gateway.client import Client, FormNotFlat, Threadgate
from gateway.client.model_forms import form_schema


class Size(enum.Enum):
    SMALL = "small"
    LARGE = "large"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Address(BaseModel):
    city: str


def one_field(annotation: Any, field: Any = ...) -> type[BaseModel]:
    """A model with one field ``value`` of ``annotation`` (``field``: its default or ``Field(...)``)."""
    namespace = {"__annotations__": {"value": annotation}, "value": field}
    if field is ...:
        del namespace["value"]
    return type("Form", (BaseModel,), namespace)


CARRIED: list[tuple[Any, Any, dict[str, Any]]] = [
    (str, ..., {"type": "string"}),
    (str, Field(min_length=2, max_length=40), {"type": "string", "minLength": 2, "maxLength": 40}),
    (bool, ..., {"type": "boolean"}),
    (int, Field(ge=0, le=10), {"type": "integer", "minimum": 0, "maximum": 10}),
    (int, Field(gt=0, lt=10), {"type": "integer", "minimum": 1, "maximum": 9}),
    (float, Field(ge=0.5, le=2.5), {"type": "number", "minimum": 0.5, "maximum": 2.5}),
    (Literal["a", "b"], ..., {"type": "string", "enum": ["a", "b"]}),
    (Size, ..., {"type": "string", "enum": ["small", "large"]}),
    (AnyUrl, ..., {"type": "string", "format": "uri"}),
    (datetime.date, ..., {"type": "string", "format": "date"}),
    (datetime.datetime, ..., {"type": "string", "format": "date-time"}),
    (
        list[Literal["lint", "tests"]],
        Field(min_length=1, max_length=2),
        {
            "type": "array",
            "items": {"type": "string", "enum": ["lint", "tests"]},
            "minItems": 1,
            "maxItems": 2,
        },
    ),
    (list[Size], ..., {"type": "array", "items": {"type": "string", "enum": ["small", "large"]}}),
    (Annotated[int, Field(ge=1)], ..., {"type": "integer", "minimum": 1}),
]


@pytest.mark.parametrize(("annotation", "field", "expected"), CARRIED)
def test_each_kind_of_field_becomes_its_flat_property(
    annotation: Any, field: Any, expected: dict[str, Any]
) -> None:
    schema = form_schema(one_field(annotation, field))
    assert schema == {"type": "object", "properties": {"value": expected}, "required": ["value"]}


def test_titles_descriptions_defaults_and_optional_fields_are_carried() -> None:
    class Deploy(BaseModel):
        target: Literal["staging", "production"] = Field(
            "staging", title="Target", description="where it goes"
        )
        size: Size = Size.SMALL
        when: datetime.date = datetime.date(2026, 1, 2)
        notes: str | None = None
        checks: list[Size] = Field(default_factory=list)

    schema = form_schema(Deploy)
    assert schema["required"] == []
    assert schema["properties"] == {
        "target": {
            "type": "string",
            "enum": ["staging", "production"],
            "title": "Target",
            "description": "where it goes",
            "default": "staging",
        },
        "size": {"type": "string", "enum": ["small", "large"], "default": "small"},
        "when": {"type": "string", "format": "date", "default": "2026-01-02"},
        "notes": {"type": "string"},
        "checks": {"type": "array", "items": {"type": "string", "enum": ["small", "large"]}},
    }


def test_a_field_is_named_by_its_alias_as_the_answer_is_read_back() -> None:
    class Aliased(BaseModel):
        full_name: str = Field(alias="fullName")

    assert list(form_schema(Aliased)["properties"]) == ["fullName"]
    assert Aliased.model_validate({"fullName": "Ada"}).full_name == "Ada"


def test_an_email_field_is_an_email_string() -> None:
    pytest.importorskip("email_validator")
    from pydantic import EmailStr

    assert form_schema(one_field(EmailStr))["properties"]["value"] == {"type": "string", "format": "email"}


REFUSED: list[tuple[Any, Any, str]] = [
    (Address, ..., "a nested model"),
    (dict[str, str], ..., "is not a type a flat form can hold"),
    (dict, ..., "a dict cannot be asked"),
    (tuple[str, str], ..., "is not a type a flat form can hold"),
    (set[Size], ..., "is not a type a flat form can hold"),
    (list[str], ..., "a list is a multi-select"),
    (list[int], ..., "a list is a multi-select"),
    (list[Address], ..., "a list is a multi-select"),
    (int | str, ..., "a union of several types"),
    (Literal[1, 2], ..., "is not a type a flat form can hold"),
    (Level, ..., "an Enum on a flat form has string values"),
    (Any, ..., "is not a type a flat form can hold"),
    (bytes, ..., "bytes is not a type a flat form can hold"),
    (str, Field(pattern=r"^\d+$"), "pattern cannot be asked"),
    (float, Field(gt=0), "gt and lt"),
    (int, Field(multiple_of=5), "multiple_of cannot be asked"),
    (bool, Field(min_length=1), "does not apply to a boolean field"),
]


@pytest.mark.parametrize(("annotation", "field", "why"), REFUSED)
def test_a_field_a_flat_form_cannot_carry_is_refused_by_name(annotation: Any, field: Any, why: str) -> None:
    with pytest.raises(FormNotFlat, match=r"field Form\.value: .*" + why.replace("(", r"\(")):
        form_schema(one_field(annotation, field))


def test_the_gateways_own_rule_refuses_what_fields_alone_allow() -> None:
    crowded = type("Crowded", (BaseModel,), {"__annotations__": {f"f{n}": str for n in range(11)}})
    with pytest.raises(FormNotFlat, match="Crowded: requested_schema has 1 to 10 properties"):
        form_schema(crowded)


class Refusing(httpx.AsyncBaseTransport, httpx.BaseTransport):
    """A transport that records any request: a refused model must send none."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(500)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(500)


class WithAddress(BaseModel):
    name: str
    address: Address


async def test_both_clients_refuse_a_model_before_any_request() -> None:
    transport = Refusing()
    async with Threadgate("http://gateway.invalid", "t", transport=transport) as tg:
        with pytest.raises(FormNotFlat, match=r"field WithAddress\.address: a nested model"):
            await tg.ask_form("run-1", "Who are you?", WithAddress)
    with (
        Client("http://gateway.invalid", "t", transport=transport) as client,
        pytest.raises(FormNotFlat, match=r"field WithAddress\.address: a nested model"),
    ):
        client.ask_form("run-1", "Who are you?", WithAddress)
    assert transport.requests == []
