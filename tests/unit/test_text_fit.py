"""Text fitted to a platform's message limit: where it is cut, how parts are marked, what a cut says."""

from __future__ import annotations

import pytest

from gateway.rules.text_fit import (
    Marks,
    keep_end,
    measure,
    one,
    split_marked,
    split_text,
    utf16_len,
    utf16_units,
)

MARKS = Marks(part="\n[{number}/{total}]", cut="\n… [{count} more]", earlier="… [{count} earlier]\n")


def bodies(parts: list[str]) -> list[str]:
    """The parts without their ``[i/n]`` markers."""
    return [part.rsplit("\n", 1)[0] for part in parts]


@pytest.mark.parametrize(
    ("text", "cost", "length"),
    [("ok", one, 2), ("ok 👍", one, 4), ("ok 👍", utf16_units, 5), ("", utf16_units, 0)],
)
def test_a_text_is_measured_by_what_each_character_costs(text: str, cost: object, length: int) -> None:
    assert measure(text, cost) == length  # type: ignore[arg-type]


def test_utf16_length_counts_characters_outside_the_bmp_twice() -> None:
    assert [utf16_len("a"), utf16_len("👍"), utf16_len("a👍b")] == [1, 2, 4]


@pytest.mark.parametrize(
    ("text", "limit", "pieces"),
    [
        ("short", 10, ["short"]),
        ("aaaa\nbbbb\ncccc", 9, ["aaaa\nbbbb", "cccc"]),
        ("aaaa bbbb\ncccc", 12, ["aaaa bbbb", "cccc"]),
        ("aaaa bbbb cccc", 9, ["aaaa bbbb", "cccc"]),
        ("abcdefghij", 4, ["abcd", "efgh", "ij"]),
        ("", 4, [""]),
    ],
)
def test_pieces_end_at_a_line_break_else_a_space_else_anywhere(
    text: str, limit: int, pieces: list[str]
) -> None:
    assert split_text(text, limit) == pieces


def test_pieces_are_measured_by_the_given_cost() -> None:
    assert split_text("👍👍👍", 4, utf16_units) == ["👍👍", "👍"]


@pytest.mark.parametrize("text", ["x" * 30, "line\n" * 5 + "end"])
def test_text_that_fits_is_returned_as_it_is(text: str) -> None:
    assert split_marked(text, 30, 3, MARKS) == [text]


def test_longer_text_is_split_at_line_breaks_and_every_part_is_marked() -> None:
    lines = [f"line {number}" for number in range(12)]

    parts = split_marked("\n".join(lines), 30, 10, MARKS)

    assert all(len(part) <= 30 for part in parts)
    assert [part.rsplit("\n", 1)[1] for part in parts] == [
        f"[{n}/{len(parts)}]" for n in range(1, len(parts) + 1)
    ]
    assert "\n".join(bodies(parts)).split("\n") == lines


@pytest.mark.parametrize(("text", "max_parts"), [("w" * 500, 3), ("word " * 100, 2), ("a\n" * 200, 4)])
def test_past_the_last_part_the_rest_is_left_out_and_the_cut_says_how_much(text: str, max_parts: int) -> None:
    parts = split_marked(text, 40, max_parts, MARKS)

    assert len(parts) == max_parts and all(len(part) <= 40 for part in parts)
    kept, note = bodies(parts)[-1].rsplit("\n", 1)
    shown = sum(len(body) for body in bodies(parts)[:-1]) + len(kept)
    assert note == f"… [{len(text) - shown} more]"


def test_split_parts_stay_within_a_limit_counted_in_utf16_units() -> None:
    marks = Marks(part=MARKS.part, cut=MARKS.cut, earlier=MARKS.earlier, cost=utf16_units)
    text = "👍" * 50

    parts = split_marked(text, 30, 10, marks)

    assert all(utf16_len(part) <= 30 for part in parts)
    assert "".join(bodies(parts)) == text


def test_keep_end_returns_text_that_fits_whole() -> None:
    assert keep_end("Target?\n  1. a\n\n✓ Answered: a", 40, MARKS) == "Target?\n  1. a\n\n✓ Answered: a"


def test_keep_end_keeps_the_end_from_a_line_start_and_says_how_much_was_left_out() -> None:
    text = "\n".join(f"line {number:02d}" for number in range(30)) + "\n✓ Answered: a"

    fitted = keep_end(text, 60, MARKS)

    note, tail = fitted.split("\n", 1)
    assert len(fitted) <= 60 and text.endswith(tail) and tail.startswith("line ")
    assert note == f"… [{len(text) - len(tail)} earlier]"


def test_keep_end_cuts_anywhere_when_no_line_starts_near_the_end() -> None:
    fitted = keep_end("z" * 100, 30, MARKS)

    note, tail = fitted.split("\n", 1)
    assert len(fitted) <= 30 and tail == "z" * len(tail)
    assert note == f"… [{100 - len(tail)} earlier]"
