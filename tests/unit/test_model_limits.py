"""Request fields take exactly the JSON type they name, and a label must show something."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from gateway.base.models import HumanInput, Option, PromptRequest, has_visible_character

TEXT_PROMPT: dict[str, Any] = {"kind": "text", "questions": [{"question": "Why?"}]}


@pytest.mark.parametrize("value", [True, False, "60", 60.0, 1e3])
def test_expires_in_seconds_takes_a_json_integer_only(value: object) -> None:
    with pytest.raises(ValidationError):
        PromptRequest.model_validate({**TEXT_PROMPT, "expires_in_seconds": value})
    with pytest.raises(ValidationError):
        HumanInput.model_validate({"expires_in_seconds": value})


def test_expires_in_seconds_accepts_an_integer() -> None:
    assert PromptRequest.model_validate({**TEXT_PROMPT, "expires_in_seconds": 60}).expires_in_seconds == 60
    assert HumanInput.model_validate_json('{"expires_in_seconds": 3600}').expires_in_seconds == 3600


@pytest.mark.parametrize(
    "label",
    [
        " ",
        "\u200b",  # zero-width space
        "\u200b\u200c\u200d\ufeff",  # zero-width (non-)joiners and a byte-order mark
        "\u202e\u202c",  # bidi overrides
        "\u3164",  # Hangul filler, a "letter" that draws nothing
        "\u2800\u2800",  # Braille blank
        "\u0301",  # a combining accent with nothing to sit on
        "\x00\x1f",
    ],
)
def test_an_option_label_of_invisible_characters_only_is_refused(label: str) -> None:
    assert not has_visible_character(label)
    with pytest.raises(ValidationError, match="visible character"):
        Option(label=label)


@pytest.mark.parametrize("label", ["staging", "é", "🚀", "x\u200b", " 2 ", "生产"])
def test_a_label_with_something_visible_is_kept(label: str) -> None:
    assert Option(label=label).label == label.strip()
