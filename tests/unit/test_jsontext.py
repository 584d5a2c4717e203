"""JSON text written on the hot paths: the same document as the standard library's, whatever the value."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gateway.base.jsontext import dumps


@pytest.mark.parametrize(
    "value",
    [
        {"prompt_id": "prm_1", "answers": [{"question": "Which?", "answer": ["Zürich ✓"]}], "n": 1.5},
        {"nested": [[{"deep": [None, True, False, 0, -7, 1e16, 1.5e-7]}]]},
        'text with "quotes", a \\ backslash, a newline\n and a tab\t',
    ],
)
def test_a_document_reads_back_as_the_standard_library_wrote_it(value: Any) -> None:
    assert json.loads(dumps(value)) == json.loads(json.dumps(value)) == value


@pytest.mark.parametrize(
    "value",
    [
        {"wide": 2**70},  # wider than 64 bits
        {"text": "lone \ud800 surrogate"},
        {1: "a key that is not text"},
    ],
)
def test_what_orjson_refuses_is_written_by_the_standard_library(value: Any) -> None:
    assert dumps(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def test_text_is_compact_and_keeps_non_ascii_characters() -> None:
    assert dumps({"a": ["é", 1]}) == '{"a":["é",1]}'
