"""Request bodies are parsed once, within limits, and never recurse as deep as the body asks."""

from __future__ import annotations

import json

import pytest

from gateway.base import jsonbody
from gateway.base.errors import GatewayError
from gateway.base.jsonbody import MAX_DEPTH, parse_json


def nested(depth: int) -> bytes:
    return b"[" * depth + b"1" + b"]" * depth


def test_nesting_up_to_the_limit_parses() -> None:
    assert parse_json(nested(MAX_DEPTH)) is not None


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 900, 100_000])
def test_deeper_nesting_is_refused_before_the_json_parser_recurses(
    depth: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    def never(*_args: object, **_kwargs: object) -> object:
        raise AssertionError("json.loads ran on a body nested too deep")

    monkeypatch.setattr(jsonbody.json, "loads", never)
    with pytest.raises(GatewayError, match="nested deeper"):
        parse_json(nested(depth))


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    body = json.dumps({"text": "[" * 500 + '\\"{' * 200, "list": [[["ok"]]]}).encode()
    assert parse_json(body)["list"] == [[["ok"]]]


def test_many_shallow_lists_are_not_deep() -> None:
    body = json.dumps({"options": [[str(n)] for n in range(200)]}).encode()
    assert len(parse_json(body)["options"]) == 200
