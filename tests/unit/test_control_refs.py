"""A control's compact reference and verb: spelled by index, read back strictly."""

from __future__ import annotations

from enum import StrEnum

import pytest

from gateway.rules.control_refs import ControlRef, decode, verb_of

PID = "prm_01J0000000000000000000000"


class Verb(StrEnum):
    PICK = "pick"
    DONE = "done"


@pytest.mark.parametrize(
    ("ref", "spelled"),
    [
        (ControlRef(PID), PID),
        (ControlRef(PID, 0), f"{PID}.0"),
        (ControlRef(PID, 2, 14), f"{PID}.2.14"),
        (ControlRef(PID, None, 3), PID),  # an option only means something under a question
    ],
)
def test_a_reference_is_spelled_by_indexes_and_reads_back(ref: ControlRef, spelled: str) -> None:
    assert ref.encode() == spelled
    assert decode(spelled) == (ref if ref.question is not None or ref.option is None else ControlRef(PID))


@pytest.mark.parametrize(
    "value",
    [
        None,
        7,
        "",
        "prm_",
        "run_01J0000000000000000000000",
        f"{PID}.",
        f"{PID}.100",
        f"{PID}.1.1000",
        f"{PID}.a",
    ],
)
def test_anything_else_is_no_reference(value: object) -> None:
    assert decode(value) is None


@pytest.mark.parametrize(
    ("value", "verb"),
    [
        ("tg.pick", Verb.PICK),
        ("tg.pick.2", Verb.PICK),
        ("tg.done", Verb.DONE),
        ("tg.other", None),
        ("pick", None),
    ],
)
def test_a_verb_is_read_from_its_prefixed_name(value: object, verb: Verb | None) -> None:
    assert verb_of(value, Verb) is verb
