"""The text-answer mapper, row by row as seed 000's "Text answers" table and contract §2 state it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.base.models import Answer, PromptKind, PromptRequest, Question, has_visible_character
from gateway.base.printable import printable
from gateway.rules.mapper import (
    Unanswered,
    check_structured,
    fits_question,
    map_approval,
    map_form,
    map_question,
    map_reply,
    map_text,
    per_question,
)

DEPLOY = "What's the deployment target?"
SOURCE = "Where should the data come from?"
SECTIONS = "Which sections?"
STYLE = "Any preference for visual style?"


def questions(kind: str, *specs: dict[str, Any]) -> list[Question]:
    """Questions as an agent raises them: validated, with ids q1, q2… filled in."""
    return PromptRequest.model_validate({"kind": kind, "questions": list(specs)}).questions


def choice(text: str, *labels: str, multi: bool = False) -> dict[str, Any]:
    return {"question": text, "multiSelect": multi, "options": [{"label": label} for label in labels]}


def single(*labels: str) -> Question:
    return questions("ask_user_question", choice(DEPLOY, *labels))[0]


def multi(*labels: str) -> Question:
    return questions("ask_user_question", choice(SECTIONS, *labels, multi=True))[0]


DEPLOY_TARGET = single("staging", "production")
SECTION_PICKER = multi("KPI cards", "Table", "Chart")
FREE_TEXT = questions("ask_user_question", {"question": STYLE})[0]


# text: answer = [<raw text>] ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["use the blue one", "", "   ", "  padded  ", "1", "yes", "line one\nline two", "Café 日本 🚀"],
)
def test_text_kind_answers_the_raw_text_unchanged(text: str) -> None:
    prompt = questions("text", {"question": "Anything else?"})
    assert map_text(PromptKind.TEXT, prompt, text) == [[text]]


# approval: affirmative tokens → ["Approve"]; everything else → ["Deny"] --------------------------------


@pytest.mark.parametrize("token", ["approve", "approved", "yes", "y", "ok", "allow", "1"])
def test_affirmative_token_approves(token: str) -> None:
    assert map_approval(token) == ["Approve"]


@pytest.mark.parametrize("text", ["APPROVE", "Approved", "YeS", "Y", "OK", "Allow"])
def test_affirmative_tokens_are_case_insensitive(text: str) -> None:
    assert map_approval(text) == ["Approve"]


@pytest.mark.parametrize("text", ["  yes  ", "\tok\n", "\n1\n", "\u00a0approve\u3000"])
def test_white_space_around_an_affirmative_token_is_ignored(text: str) -> None:
    assert map_approval(text) == ["Approve"]


@pytest.mark.parametrize(
    "text",
    [
        "no",
        "deny",
        "Deny",
        "",
        "   ",
        "2",
        "0",
        "01",
        "1.0",
        "-1",
        "yes please",
        "yes.",
        "y e s",
        "okay",
        "sure",
        "approve?",
        "don't approve",
        "１",  # fullwidth digit one: not the token 1
        "١",  # Arabic-Indic digit one
        "ｙｅｓ",  # fullwidth letters
        "👍",
        "yes\nno",
    ],
)
def test_anything_but_an_affirmative_token_denies(text: str) -> None:
    assert map_approval(text) == ["Deny"]


def test_approval_prompt_maps_through_map_text() -> None:
    prompt = questions("approval", {"question": "Run db__drop?"})
    assert map_text(PromptKind.APPROVAL, prompt, "yes") == [["Approve"]]
    assert map_text(PromptKind.APPROVAL, prompt, "maybe") == [["Deny"]]


# ask_user_question, one question: number, label, or "Other" ----------------------------------------


@pytest.mark.parametrize(("text", "label"), [("1", "staging"), ("2", "production")])
def test_bare_number_picks_nth_label(text: str, label: str) -> None:
    assert map_question(DEPLOY_TARGET, text) == [label]


@pytest.mark.parametrize("text", [" 2", "2 ", "\n2\n", "\t 2 \t"])
def test_white_space_around_a_number_is_ignored(text: str) -> None:
    assert map_question(DEPLOY_TARGET, text) == ["production"]


def test_leading_zeros_still_name_the_number() -> None:
    assert map_question(DEPLOY_TARGET, "02") == ["production"]


@pytest.mark.parametrize("text", ["staging", "Staging", "STAGING", "  production  ", "PRODUCTION\n"])
def test_case_insensitive_label_match_picks_that_label(text: str) -> None:
    assert map_question(DEPLOY_TARGET, text) == [text.strip().lower()]


@pytest.mark.parametrize(
    "text",
    [
        "3",  # out of range
        "0",  # zero names no option
        "-1",  # negative
        "+1",
        "1.0",
        "1e0",
        "2nd",
        "#1",
        "1)",
        "staging please",
        "stag",
        "staging, production",  # two answers to a single-select question
        "1 2",
        "99999999999999999999999999",
        "1" * 5000,  # past Python's int() digit limit: still just text
    ],
)
def test_anything_else_is_the_raw_text_other(text: str) -> None:
    assert map_question(DEPLOY_TARGET, text) == [text]


@pytest.mark.parametrize("text", ["  something else  ", "\nuse canary\n"])
def test_other_keeps_the_text_verbatim_white_space_included(text: str) -> None:
    assert map_question(DEPLOY_TARGET, text) == [text]


@pytest.mark.parametrize("text", ["", "   ", "\n"])
def test_empty_or_blank_text_to_a_single_select_is_other(text: str) -> None:
    assert map_question(DEPLOY_TARGET, text) == [text]


@pytest.mark.parametrize(
    "text",
    [
        "２",  # fullwidth digit two
        "٢",  # Arabic-Indic digit two
        "۲",  # Extended Arabic-Indic digit two
        "²",  # superscript two
        "Ⅱ",  # Roman numeral two
    ],
)
def test_non_ascii_digits_are_not_numbers(text: str) -> None:
    assert map_question(DEPLOY_TARGET, text) == [text]


def test_an_exact_label_wins_over_a_position_when_labels_look_like_numbers() -> None:
    question = single("10", "5", "1")
    assert map_question(question, "1") == ["1"]  # the label "1", not the first option
    assert map_question(question, " 5 ") == ["5"]
    assert map_question(question, "2") == ["5"]  # no label reads "2": the second option
    assert map_question(question, "3") == ["1"]


@pytest.mark.parametrize(
    ("labels", "text", "answer"),
    [
        (("2", "1"), "1", ["1"]),
        (("2", "1"), "1, 2", ["2", "1"]),
        (("2", "1", "7"), "3", ["7"]),
        (("2", "1", "7"), "1 3", ["1", "7"]),
        (("b", "a"), "1", ["b"]),
    ],
)
def test_multi_select_numbers_name_labels_reading_so_before_positions(
    labels: tuple[str, ...], text: str, answer: list[str]
) -> None:
    question = multi(*labels)
    assert map_question(question, text) == answer
    assert fits_question(question, text)


def test_out_of_range_number_falls_to_a_numeric_label() -> None:
    assert map_question(single("10", "5", "1"), "10") == ["10"]


@pytest.mark.parametrize(
    ("labels", "text", "label"),
    [
        (("Café", "Tea"), "café", "Café"),
        (("Café", "Tea"), "CAFÉ", "Café"),
        (("日本", "中国"), "日本", "日本"),
        (("🚀 ship", "🛑 hold"), "🛑 HOLD", "🛑 hold"),
        (("Straße", "Weg"), "STRASSE", "Straße"),  # full case folding, not just lower()
        (("Ελλάδα", "Κύπρος"), "ελλάδα", "Ελλάδα"),
    ],
)
def test_unicode_labels_match_case_insensitively(labels: tuple[str, ...], text: str, label: str) -> None:
    assert map_question(single(*labels), text) == [label]


def test_unicode_labels_still_answer_to_their_numbers() -> None:
    assert map_question(single("日本", "🚀"), "2") == ["🚀"]


def test_labels_given_with_padding_match_without_it() -> None:
    assert map_question(single("  staging  ", "production"), "staging") == ["staging"]


def test_free_text_question_answers_the_raw_text() -> None:
    assert map_question(FREE_TEXT, "  dark theme ") == ["  dark theme "]
    assert map_question(FREE_TEXT, "1") == ["1"]
    assert map_question(FREE_TEXT, "") == [""]


# multiSelect: comma- or space-separated numbers select several -------------------------------------


@pytest.mark.parametrize("text", ["1,2", "1, 2", "1 2", "1 ,2", "1,,2", " 1\n2 ", "1\t2", ",1,2,"])
def test_comma_or_space_separated_numbers_select_several(text: str) -> None:
    assert map_question(SECTION_PICKER, text) == ["KPI cards", "Table"]


def test_one_number_selects_one_label() -> None:
    assert map_question(SECTION_PICKER, "3") == ["Chart"]


def test_repeated_numbers_select_a_label_once() -> None:
    assert map_question(SECTION_PICKER, "1, 1, 3") == ["KPI cards", "Chart"]


def test_selected_labels_come_in_option_order() -> None:
    assert map_question(SECTION_PICKER, "3, 1") == ["KPI cards", "Chart"]


def test_every_number_selects_every_label() -> None:
    assert map_question(SECTION_PICKER, "3 2 1") == ["KPI cards", "Table", "Chart"]


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_empty_text_to_a_multi_select_selects_nothing(text: str) -> None:
    assert map_question(SECTION_PICKER, text) == []


@pytest.mark.parametrize(
    "text",
    [
        "1, 4",  # one out of range: no partial selection
        "0",
        "0, 1",
        "-1, 2",
        "1.0",
        "1; 2",
        "1, table",  # numbers mixed with words
        "1 and 2",
        "１, ２",  # non-ASCII digits
        "1, ٢",
        "KPI cards, Table",  # labels by name are one answer, not several
    ],
)
def test_multi_select_text_that_is_not_all_valid_numbers_is_other(text: str) -> None:
    assert map_question(SECTION_PICKER, text) == [text]


def test_multi_select_whole_text_matching_a_label_picks_it() -> None:
    assert map_question(SECTION_PICKER, "  kpi CARDS ") == ["KPI cards"]


# several questions: the same text mapped against each independently -------------------------------


def test_several_questions_each_map_the_same_text_independently() -> None:
    prompt = questions(
        "ask_user_question",
        choice(DEPLOY, "staging", "production"),
        choice(SECTIONS, "KPI cards", "Table", "Chart", multi=True),
        {"question": STYLE},
    )
    assert map_text(PromptKind.ASK_USER_QUESTION, prompt, "2") == [["production"], ["Table"], ["2"]]
    assert map_text(PromptKind.ASK_USER_QUESTION, prompt, "1 3") == [["1 3"], ["KPI cards", "Chart"], ["1 3"]]


def test_several_questions_all_receive_the_same_answer() -> None:
    prompt = questions(
        "ask_user_question", choice(SOURCE, "CSV import", "API"), choice("Which region?", "EU", "US")
    )
    answers = map_reply(PromptKind.ASK_USER_QUESTION, prompt, "1")
    assert [answer.answer for answer in answers] == [["CSV import"], ["EU"]]


def test_a_number_in_range_for_one_question_is_other_for_a_shorter_one() -> None:
    prompt = questions(
        "ask_user_question", choice(SOURCE, "CSV", "API", "DB"), choice(STYLE, "dark", "light")
    )
    assert map_text(PromptKind.ASK_USER_QUESTION, prompt, "3") == [["DB"], ["3"]]


THREE = questions(
    "ask_user_question",
    choice(DEPLOY, "staging", "production"),
    choice(SECTIONS, "KPI cards", "Table", "Chart", multi=True),
    {"question": STYLE},
)


@pytest.mark.parametrize(
    "text",
    [
        "2\n1 3\ndark, please",
        "production\n1, 3\n  dark, please  ",
        "1. 2\n2. 1 3\n3. dark, please",
        "3) dark, please\n1) production\n2) 1, 3",
        "\n2\n\n1 3\ndark, please\n",
    ],
)
def test_one_line_per_question_answers_each_with_its_own_line(text: str) -> None:
    assert map_text(PromptKind.ASK_USER_QUESTION, THREE, text) == [
        ["production"],
        ["KPI cards", "Chart"],
        ["dark, please"],
    ]


@pytest.mark.parametrize(
    "text",
    [
        "2\n1 3",  # fewer lines than questions
        "2\n1 3\ndark\nextra",  # more
        "1. 2\n1. 1 3\n3. dark",  # a number twice: lines as written, numbers and all
        "2",
    ],
)
def test_any_other_reply_is_the_same_text_for_every_question_or_its_lines_as_written(text: str) -> None:
    lines = [line for line in text.splitlines() if line.strip()]
    expected = lines if len(lines) == len(THREE) else [text] * len(THREE)
    assert per_question(THREE, text) == expected


# structured metadata.answers: used as they stand, or refused whole ---------------------------------

DASHBOARD = questions(
    "ask_user_question",
    choice(SOURCE, "CSV import", "API"),
    choice(SECTIONS, "KPI cards", "Table", "Chart", multi=True),
    {"question": STYLE},
)
SUMMARY = "CSV import · KPI cards, Table · dark theme"
SEED_ANSWERS = [
    {"question": SOURCE, "answer": ["CSV import"]},
    {"question": SECTIONS, "answer": ["KPI cards", "Table"]},
    {"question": STYLE, "answer": ["dark theme"]},
]
SEED_LISTS = [["CSV import"], ["KPI cards", "Table"], ["dark theme"]]


def test_structured_answers_keyed_by_question_text_are_used_as_they_stand() -> None:
    answers = map_reply(PromptKind.ASK_USER_QUESTION, DASHBOARD, SUMMARY, SEED_ANSWERS)
    assert answers == [
        Answer(question=SOURCE, question_id="q1", answer=["CSV import"]),
        Answer(question=SECTIONS, question_id="q2", answer=["KPI cards", "Table"]),
        Answer(question=STYLE, question_id="q3", answer=["dark theme"]),
    ]


def test_structured_answers_keyed_by_question_id_are_used_as_they_stand() -> None:
    entries = [
        {"question_id": "q3", "answer": ["dark theme"]},
        {"question_id": "q1", "answer": ["CSV import"]},
        {"question_id": "q2", "answer": ["KPI cards", "Table"]},
    ]
    assert check_structured(DASHBOARD, entries) == SEED_LISTS


def test_structured_answers_may_mix_ids_and_question_texts() -> None:
    entries = [SEED_ANSWERS[0], {"question_id": "q2", "answer": ["Table"]}, SEED_ANSWERS[2]]
    assert check_structured(DASHBOARD, entries) == [["CSV import"], ["Table"], ["dark theme"]]


def test_structured_answers_are_not_matched_against_options() -> None:
    entries = [
        {"question": SOURCE, "answer": ["a spreadsheet"]},
        {"question": SECTIONS, "answer": []},
        {"question": STYLE, "answer": ["2"]},
    ]
    assert check_structured(DASHBOARD, entries) == [["a spreadsheet"], [], ["2"]]


def test_structured_answers_to_an_approval_are_used_as_they_stand() -> None:
    prompt = questions("approval", {"question": "Run db__drop?"})
    answers = map_reply(PromptKind.APPROVAL, prompt, "no", [{"question_id": "q1", "answer": ["Approve"]}])
    assert answers[0].answer == ["Approve"]


def test_an_unknown_question_id_falls_back_to_the_question_text() -> None:
    entries = [{"question_id": "nope", "question": SOURCE, "answer": ["API"]}, *SEED_ANSWERS[1:]]
    assert check_structured(DASHBOARD, entries) == [["API"], ["KPI cards", "Table"], ["dark theme"]]


REFUSED_SETS: dict[str, Any] = {
    "partial set": SEED_ANSWERS[:2],
    "empty set": [],
    "one entry too many": [*SEED_ANSWERS, {"question": "Extra?", "answer": ["x"]}],
    "question answered twice": [SEED_ANSWERS[0], SEED_ANSWERS[0], SEED_ANSWERS[2]],
    "same question by id and by text": [
        SEED_ANSWERS[0],
        {"question_id": "q1", "answer": ["API"]},
        SEED_ANSWERS[2],
    ],
    "unknown question": [SEED_ANSWERS[0], SEED_ANSWERS[1], {"question": "Colour?", "answer": ["red"]}],
    "question text differs in case": [
        {"question": SOURCE.upper(), "answer": ["API"]},
        *SEED_ANSWERS[1:],
    ],
    "answer not a list": [{"question": SOURCE, "answer": "CSV import"}, *SEED_ANSWERS[1:]],
    "answer missing": [{"question": SOURCE}, *SEED_ANSWERS[1:]],
    "answer holds a non-string": [{"question": SOURCE, "answer": [1]}, *SEED_ANSWERS[1:]],
    "answer holds null": [{"question": SOURCE, "answer": [None]}, *SEED_ANSWERS[1:]],
    "entry not an object": ["CSV import", *SEED_ANSWERS[1:]],
    "entry names no question": [{"answer": ["CSV import"]}, *SEED_ANSWERS[1:]],
    "question_id not a string": [{"question_id": ["q1"], "answer": ["API"]}, *SEED_ANSWERS[1:]],
    "question text not a string": [{"question": {"q": 1}, "answer": ["API"]}, *SEED_ANSWERS[1:]],
    "set not a list": {"answers": SEED_ANSWERS},
    "set is a string": "CSV import",
}


@pytest.mark.parametrize("entries", REFUSED_SETS.values(), ids=REFUSED_SETS.keys())
def test_partial_or_malformed_structured_answers_are_refused(entries: Any) -> None:
    assert check_structured(DASHBOARD, entries) is None


@pytest.mark.parametrize("entries", REFUSED_SETS.values(), ids=REFUSED_SETS.keys())
def test_refused_structured_answers_fall_back_to_the_text(entries: Any) -> None:
    answers = map_reply(PromptKind.ASK_USER_QUESTION, DASHBOARD, "1", entries)
    assert [answer.answer for answer in answers] == [["CSV import"], ["KPI cards"], ["1"]]


def test_no_structured_answers_means_the_text_is_mapped() -> None:
    answers = map_reply(PromptKind.ASK_USER_QUESTION, [DEPLOY_TARGET], "2", None)
    assert answers == [Answer(question=DEPLOY, question_id="q1", answer=["production"])]


def test_map_reply_names_each_answer_by_question_and_id() -> None:
    prompt = questions(
        "ask_user_question", {"id": "target", **choice(DEPLOY, "staging")}, {"question": STYLE}
    )
    answers = map_reply(PromptKind.ASK_USER_QUESTION, prompt, "staging")
    assert [(answer.question, answer.question_id) for answer in answers] == [
        (DEPLOY, "target"),
        (STYLE, "q2"),
    ]


def test_structured_answer_lists_are_copies() -> None:
    given = ["staging"]
    answers = map_reply(
        PromptKind.ASK_USER_QUESTION, [DEPLOY_TARGET], "", [{"question_id": "q1", "answer": given}]
    )
    given.append("production")
    assert answers[0].answer == ["staging"]


# Properties: any valid prompt, any text, any junk: never raises, one list of strings per question ----

labels_st = st.lists(
    st.text(min_size=1, max_size=12).filter(has_visible_character),
    min_size=1,
    max_size=6,
    unique_by=lambda label: label.strip().casefold(),
)


@st.composite
def choice_questions(draw: st.DrawFn, text: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"question": text}
    variant = draw(st.sampled_from(["single", "multi", "free"]))
    if variant != "free":
        spec["options"] = [{"label": label} for label in draw(labels_st)]
        spec["multiSelect"] = variant == "multi"
    if draw(st.booleans()):
        spec["id"] = draw(st.from_regex(r"[A-Za-z0-9_.-]{1,8}", fullmatch=True))
    return spec


@st.composite
def prompt_requests(draw: st.DrawFn) -> PromptRequest:
    kind = draw(st.sampled_from([PromptKind.APPROVAL, PromptKind.ASK_USER_QUESTION, PromptKind.TEXT]))
    texts_st = st.text(min_size=1, max_size=30).filter(lambda text: bool(text.strip()))
    if kind is PromptKind.APPROVAL:
        specs: list[dict[str, Any]] = [{"question": draw(texts_st)}]
    elif kind is PromptKind.TEXT:
        specs = [{"question": draw(texts_st)}]
    else:
        texts = draw(st.lists(texts_st, min_size=1, max_size=4, unique=True))
        specs = [draw(choice_questions(text)) for text in texts]
        ids = [spec["id"] for spec in specs if "id" in spec]
        assigned = [f"q{index}" for index, spec in enumerate(specs, start=1) if "id" not in spec]
        if len(set(ids + assigned)) != len(ids + assigned):
            for spec in specs:
                spec.pop("id", None)
    return PromptRequest.model_validate({"kind": kind, "questions": specs})


json_st = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)


APPROVAL_WORDS = ["approve", "Yes", " ok ", "1", "no", "２"]


@st.composite
def replies(draw: st.DrawFn, request: PromptRequest) -> str:
    """Text a person might send: junk, or built from the prompt's own labels and numbers."""
    labels = [label for question in request.questions for label in question.labels]
    numbers = st.integers(min_value=-2, max_value=30).map(str)
    near = st.sampled_from(labels).map(lambda label: f" {label.upper()} ") if labels else st.text()
    listed = st.lists(numbers, max_size=5).map(", ".join)
    return draw(st.one_of(st.text(), numbers, near, listed, st.sampled_from(APPROVAL_WORDS)))


@st.composite
def junk_answers(draw: st.DrawFn, request: PromptRequest) -> Any:
    """Structured answers from a careless client: almost right, or not even a list."""
    names: list[Any] = [question.question for question in request.questions]
    names += [question.id for question in request.questions]
    entry = st.fixed_dictionaries(
        {},
        optional={
            "question": st.sampled_from(names) | json_st,
            "question_id": st.sampled_from(names) | json_st,
            "answer": st.lists(st.text(max_size=5), max_size=3) | json_st,
        },
    )
    return draw(st.one_of(json_st, st.lists(entry | json_st, max_size=len(names) + 1)))


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_map_reply_never_raises_and_answers_every_question_with_strings(data: st.DataObject) -> None:
    request = data.draw(prompt_requests())
    text = data.draw(replies(request))
    structured = data.draw(st.none() | junk_answers(request))
    answers = map_reply(request.kind, request.questions, text, structured)
    assert [answer.question_id for answer in answers] == [question.id for question in request.questions]
    assert [answer.question for answer in answers] == [question.question for question in request.questions]
    for answer in answers:
        assert isinstance(answer.answer, list)
        assert all(isinstance(value, str) for value in answer.answer)


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_mapped_text_is_a_label_or_the_raw_text(data: st.DataObject) -> None:
    request = data.draw(prompt_requests())
    text = data.draw(replies(request))
    texts = per_question(request.questions, text)
    for question, answer, own in zip(
        request.questions, map_text(request.kind, request.questions, text), texts, strict=True
    ):
        if request.kind is PromptKind.APPROVAL:
            assert answer in (["Approve"], ["Deny"])
        elif question.multi_select:
            assert answer == [own] or set(answer) <= set(question.labels)
        else:
            assert answer == [own] or (len(answer) == 1 and answer[0] in question.labels)


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_a_valid_full_structured_set_is_returned_unchanged(data: st.DataObject) -> None:
    request = data.draw(prompt_requests())
    lists = [data.draw(st.lists(st.text(max_size=8), max_size=3)) for _ in request.questions]
    entries = [
        {"question_id": question.id, "answer": answer}
        if data.draw(st.booleans())
        else {"question": question.question, "answer": answer}
        for question, answer in zip(request.questions, lists, strict=True)
    ]
    shuffled = data.draw(st.permutations(entries))
    text = data.draw(st.text())
    answers = map_reply(request.kind, request.questions, text, shuffled)
    # Returned as given, but printable: a person's words reach the agent without control characters.
    assert [answer.answer for answer in answers] == [[printable(item) for item in given] for given in lists]


# A form of every question (a modal, a card): options picked and answers typed ---------------------------

SURVEY = questions(
    "ask_user_question",
    {"question": "Source?", "options": [{"label": "CSV"}, {"label": "API"}]},
    {"question": "Sections?", "options": [{"label": "KPI"}, {"label": "Table"}], "multi_select": True},
    {"question": "Style?"},
)


@pytest.mark.parametrize(
    ("picked", "typed", "answers", "unanswered"),
    [
        ([[1], [0, 1], []], ["", "", "dark"], [["API"], ["KPI", "Table"], ["dark"]], {}),
        ([[], [1], []], ["Sheets", "a map", "x"], [["Sheets"], ["Table", "a map"], ["x"]], {}),
        ([[], [], []], ["", "", "x"], None, {0: Unanswered.NONE}),
        ([[0], [], []], ["Sheets", "", "x"], None, {0: Unanswered.BOTH}),
        ([[0], [], []], ["", "", "  "], None, {2: Unanswered.EMPTY}),
        ([[], [], []], ["", "", ""], None, {0: Unanswered.NONE, 2: Unanswered.EMPTY}),
        ([[2], [], []], ["", "", "x"], None, {}),  # an option out of range
        ([[-1], [], []], ["", "", "x"], None, {}),
        ([[0], [1, 1], []], ["", "", "x"], None, {}),  # an option picked twice
        ([[0, 1], [], []], ["", "", "x"], None, {}),  # two options for one choice
    ],
)
def test_a_form_of_every_question_maps_to_one_answer_list_per_question_or_says_what_is_missing(
    picked: list[list[int]],
    typed: list[str],
    answers: list[list[str]] | None,
    unanswered: dict[int, Unanswered],
) -> None:
    read = map_form(SURVEY, picked, typed)
    assert (read.answers, read.unanswered) == (answers, unanswered)
