"""The core's answer step: a decoded press, form or reply against each kind of prompt, and what comes of it
(the outcome, the one notice, the next question or field, the drafts). The sink is a fake that reads a
message with the core's own reply reader, so a form's value is checked by the one validator."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from gateway import notices
from gateway.answer_step import Act, NextStep, StepRequest, pages_draft, questions_draft, reply_draft, step
from gateway.errors import not_found
from gateway.models import Answer, InboundMessage, Prompt, PromptRequest, PromptState
from gateway.outcomes import Draft, DraftStatus, Outcome, Received
from gateway.replies import ReplyAction, draft_name, read_reply

THREAD = "slack:C1:1.0"
ALICE, EVE = "slack:UALICE", "slack:UEVE"
PID = "prm_01J0000000000000000000STEP"

APPROVAL = {
    "kind": "approval",
    "questions": [{"question": "Deploy?", "options": [{"label": "Approve"}, {"label": "Deny"}]}],
}
SINGLE = {"questions": [{"question": "Where?", "options": [{"label": "staging"}, {"label": "production"}]}]}
MULTI = {
    "questions": [
        {
            "question": "Sections?",
            "multiSelect": True,
            "options": [{"label": "KPI cards"}, {"label": "Chart"}, {"label": "Table"}],
        }
    ]
}
FREE = {"kind": "text", "questions": [{"question": "Release note?"}]}
SEVERAL = {
    "questions": [
        {"question": "Source?", "options": [{"label": "CSV"}, {"label": "API"}]},
        {"question": "Theme?", "options": [{"label": "dark"}, {"label": "light"}]},
    ]
}
FORM = {
    "kind": "form",
    "message": "Deploy settings",
    "requested_schema": {
        "type": "object",
        "properties": {
            "env": {"type": "string", "title": "Environment", "enum": ["stg", "prod"]},
            "replicas": {"type": "integer", "minimum": 1},
            "notify": {"type": "boolean"},
            "regions": {"type": "array", "items": {"enum": ["eu", "us", "ap"]}},
        },
        "required": ["env", "replicas"],
    },
}
POSITIONS = {
    "kind": "form",
    "message": "Pick",
    "requested_schema": {
        "type": "object",
        "properties": {
            "c": {"type": "string", "oneOf": [{"const": "2", "title": "2"}, {"const": "1", "title": "1"}]},
            "m": {
                "type": "array",
                "items": {"anyOf": [{"const": "2", "title": "2"}, {"const": "1", "title": "1"}]},
            },
        },
        "required": ["c", "m"],
    },
}
URL = {"kind": "url", "message": "Connect", "url": "https://example.com/c"}


def prompt_of(payload: dict[str, Any], **fields: Any) -> Prompt:
    request = PromptRequest.model_validate({"kind": "ask_user_question", **payload})
    assert request.questions is not None
    now = datetime.now(UTC)
    return Prompt(
        prompt_id=PID,
        run_id="run_01J0000000000000000000STEP",
        thread_id=THREAD,
        agent="ops",
        kind=request.kind,
        message=request.message,
        requested_schema=request.requested_schema,
        url=request.url,
        questions=request.questions,
        created_at=now,
        expires_at=now,
        started_by=ALICE,
        **fields,
    )


class FakeCore:
    """An inbound sink in memory: ALICE may answer; a message is read by the core's reply reader."""

    def __init__(self, prompt: Prompt | None, *, duplicate: bool = False) -> None:
        self.prompt = prompt
        self.duplicate = duplicate
        self.drafts: dict[str, dict[str, str]] = {}
        self.received: list[InboundMessage] = []

    async def get_prompt(self, prompt_id: str) -> Prompt:
        if self.prompt is None or prompt_id != self.prompt.prompt_id:
            raise not_found("PROMPT_NOT_FOUND", "prompt", prompt_id)
        return self.prompt

    async def save_draft(self, prompt_id: str, sender: str, name: str, values: dict[str, str]) -> Draft:
        prompt = await self.get_prompt(prompt_id)
        if not prompt.pending:
            return Draft(DraftStatus.STALE, {})
        if sender != ALICE:
            return Draft(DraftStatus.NOT_ALLOWED, {})
        self.drafts.setdefault(name, {}).update(values)
        return Draft(DraftStatus.SAVED, dict(self.drafts[name]))

    async def get_draft(self, thread_id: str, name: str) -> dict[str, str]:
        return dict(self.drafts.get(name, {}))

    async def receive(self, message: InboundMessage) -> Received:
        self.received.append(message)
        prompt = await self.get_prompt(message.prompt_id or "")
        if self.duplicate:
            return Received(Outcome.DUPLICATE)
        if not prompt.pending:
            return Received(Outcome.STALE, prompt)
        if message.sender != ALICE:
            return Received(Outcome.NOT_ALLOWED, prompt)
        draft = self.drafts.get(draft_name(prompt.prompt_id), {})
        reading = read_reply(prompt, message.text, message.answers, draft, decline=message.decline)
        if reading.action is ReplyAction.ANSWER:
            answered = prompt.model_copy(
                update={"prompt_state": PromptState.ANSWERED, "answers": reading.answers}
            )
            return Received(Outcome.ANSWERED, answered)
        if reading.action is ReplyAction.DECLINE:
            return Received(Outcome.DECLINED, prompt)
        if reading.action is ReplyAction.STEP:
            self.drafts.setdefault(draft_name(prompt.prompt_id), {}).update(reading.draft)
        return Received(Outcome.KEPT, prompt, reading.notice, reading.errors)


def request(act: Act, index: int = 0, **what: Any) -> StepRequest:
    return StepRequest(act, what.pop("prompt_id", PID), what.pop("sender", ALICE), "ev1", index, **what)


def answers_sent(core: FakeCore) -> list[list[str]]:
    [message] = core.received
    return [entry["answer"] for entry in message.answers or []]


# Answers ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "done", "answers"),
    [
        pytest.param(SINGLE, request(Act.PICK, options=(1,)), [["production"]], id="pick"),
        pytest.param(APPROVAL, request(Act.PICK, options=(0,)), [["Approve"]], id="approve"),
        pytest.param(SINGLE, request(Act.CHOOSE, options=(0,)), [["staging"]], id="choose-one"),
        pytest.param(MULTI, request(Act.CHOOSE, options=(2, 0)), [["KPI cards", "Table"]], id="choose-ticks"),
        pytest.param(
            MULTI, request(Act.SUBMIT, ticked=frozenset({2, 0})), [["KPI cards", "Table"]], id="submit"
        ),
        pytest.param(MULTI, request(Act.SUBMIT, ticked=frozenset()), [[]], id="submit-none"),
        pytest.param(SINGLE, request(Act.TEXT, text="  canary \n"), [["  canary \n"]], id="other-verbatim"),
        pytest.param(FREE, request(Act.TEXT, text="Aurora"), [["Aurora"]], id="free-text"),
        pytest.param(
            SEVERAL, request(Act.ANSWERS, lists=[["API"], ["dark"]]), [["API"], ["dark"]], id="answers"
        ),
        pytest.param(URL, request(Act.DONE), [["done"]], id="url-done"),
    ],
)
async def test_a_fitting_press_answers_with_structured_answers_by_question_id(
    payload: dict[str, Any], done: StepRequest, answers: list[list[str]]
) -> None:
    core = FakeCore(prompt_of(payload))
    result = await step(core, done)
    assert (result.outcome, result.refused, result.next) == (Outcome.ANSWERED, False, None)
    assert answers_sent(core) == answers
    assert [entry["question_id"] for entry in core.received[0].answers or []] == [
        f"q{number}" for number in range(1, len(answers) + 1)
    ]
    summary = " · ".join(", ".join(answer) if answer else "(no selection)" for answer in answers)
    assert result.notice == notices.answered(summary) == f"Your answer was recorded: {summary}"
    assert core.received[0].notify is False


@pytest.mark.parametrize(
    ("payload", "pressed"),
    [
        pytest.param(SINGLE, request(Act.PICK, options=(2,)), id="option-out-of-range"),
        pytest.param(SINGLE, request(Act.PICK, 1, options=(0,)), id="question-out-of-range"),
        pytest.param(SINGLE, request(Act.PICK), id="pick-without-option"),
        pytest.param(MULTI, request(Act.PICK, options=(0,)), id="pick-on-a-multi-select"),
        pytest.param(SINGLE, request(Act.SUBMIT), id="submit-on-a-single-select"),
        pytest.param(MULTI, request(Act.SUBMIT, ticked=frozenset({9})), id="ticked-out-of-range"),
        pytest.param(MULTI, request(Act.SUBMIT, ticked=frozenset({-1})), id="ticked-of-another-prompt"),
        pytest.param(SINGLE, request(Act.CHOOSE, options=(0, 1)), id="two-on-a-single-select"),
        pytest.param(SINGLE, request(Act.CHOOSE), id="nothing-on-a-single-select"),
        pytest.param(MULTI, request(Act.CHOOSE, options=(0, 0)), id="repeated-value"),
        pytest.param(APPROVAL, request(Act.CHOOSE, options=(0,)), id="select-on-an-approval"),
        pytest.param(SINGLE, request(Act.EDIT, fields={"command": ["ls"]}), id="edit-on-a-question"),
        pytest.param(FREE, request(Act.PICK, options=(0,)), id="pick-on-free-text"),
        pytest.param(SEVERAL, request(Act.ANSWERS, lists=[["API"]]), id="answers-short"),
        pytest.param(SINGLE, request(Act.DONE), id="done-on-a-question"),
        pytest.param(SINGLE, request(Act.DECLINE), id="decline-on-a-question"),
        pytest.param(URL, request(Act.PICK, options=(0,)), id="pick-on-a-url-step"),
        pytest.param(FORM, request(Act.DONE), id="done-on-a-form"),
        pytest.param(SINGLE, request(Act.PICK, options=(0,), thread_id="slack:C9:9.0"), id="another-thread"),
    ],
)
async def test_a_press_that_does_not_fit_its_prompt_is_refused_before_the_core_receives_it(
    payload: dict[str, Any], pressed: StepRequest
) -> None:
    core = FakeCore(prompt_of(payload))
    result = await step(core, pressed)
    assert (result.notice, result.refused, result.outcome) == (notices.MISMATCH, True, None)
    assert core.received == [] and core.drafts == {}


async def test_a_reason_given_on_an_approval_denies_with_that_note() -> None:
    core = FakeCore(prompt_of(APPROVAL))
    result = await step(core, request(Act.TEXT, text="use the staging copy"))
    assert result.outcome is Outcome.ANSWERED
    [sent] = core.received
    assert (sent.answers, sent.note) == (
        [{"question": "Deploy?", "question_id": "q1", "answer": ["Deny"]}],
        "use the staging copy",
    )


async def test_an_edit_form_on_an_approval_raised_editable_approves_with_the_typed_arguments() -> None:
    call = {"name": "Bash", "arguments": {"command": "rm -rf build", "timeout": 30}}
    core = FakeCore(prompt_of(APPROVAL, tool_call=call, editable=True))
    await step(core, request(Act.EDIT, fields={"command": ["rm -rf build/tmp"], "timeout": ["5"]}))
    [sent] = core.received
    assert sent.arguments == {"command": "rm -rf build/tmp", "timeout": 5}


async def test_an_edit_form_on_an_approval_not_raised_editable_is_refused_before_the_core() -> None:
    core = FakeCore(prompt_of(APPROVAL, tool_call={"name": "Bash", "arguments": {"command": "ls"}}))
    result = await step(core, request(Act.EDIT, fields={"command": ["rm -rf /"]}))
    assert result.refused and core.received == []


async def test_an_empty_text_answer_is_refused() -> None:
    core = FakeCore(prompt_of(FREE))
    result = await step(core, request(Act.TEXT, text="   "))
    assert (result.notice, result.refused, core.received) == (notices.EMPTY_TEXT, True, [])


async def test_a_press_on_a_prompt_nobody_raised_says_so() -> None:
    result = await step(FakeCore(None), request(Act.PICK, options=(0,)))
    assert (result.notice, result.refused) == (notices.UNKNOWN_PROMPT, True)


async def test_a_store_failure_asks_to_try_again() -> None:
    class Down(FakeCore):
        async def get_prompt(self, prompt_id: str) -> Prompt:
            raise ConnectionError("redis down")

    result = await step(Down(prompt_of(SINGLE)), request(Act.PICK, options=(0,)))
    assert (result.notice, result.refused) == (notices.TRY_AGAIN, True)


# Who may answer, and prompts that settled --------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "pressed"),
    [
        pytest.param(SINGLE, request(Act.PICK, options=(0,), sender=EVE), id="pick"),
        pytest.param(MULTI, request(Act.TOGGLE, options=(0,), sender=EVE), id="toggle"),
        pytest.param(SEVERAL, request(Act.PICK, options=(0,), sender=EVE), id="step-of-several"),
        pytest.param(FREE, request(Act.ASK, sender=EVE), id="text-request"),
        pytest.param(FORM, request(Act.PICK, options=(0,), sender=EVE), id="form-field"),
        pytest.param(URL, request(Act.DECLINE, sender=EVE), id="decline"),
    ],
)
async def test_someone_not_allowed_is_told_the_one_rule_and_nothing_is_kept(
    payload: dict[str, Any], pressed: StepRequest
) -> None:
    core = FakeCore(prompt_of(payload))
    result = await step(core, pressed)
    assert (result.notice, result.refused, result.outcome) == (notices.NOT_ALLOWED, True, Outcome.NOT_ALLOWED)
    assert all(not values for values in core.drafts.values())


@pytest.mark.parametrize(
    ("settled", "notice"),
    [
        pytest.param(
            {
                "prompt_state": PromptState.ANSWERED,
                "answers": [Answer(question="Where?", question_id="q1", answer=["staging"])],
            },
            "This prompt was already answered (staging), so nothing was changed.",
            id="answered",
        ),
        pytest.param(
            {"prompt_state": PromptState.CANCELLED, "reason": "the run ended"},
            "This prompt was cancelled (the run ended), so nothing was changed.",
            id="cancelled",
        ),
    ],
)
@pytest.mark.parametrize("act", [Act.PICK, Act.TOGGLE, Act.OPEN])
async def test_a_press_on_a_settled_prompt_says_how_it_settled(
    settled: dict[str, Any], notice: str, act: Act
) -> None:
    payload = MULTI if act is Act.TOGGLE else SINGLE
    result = await step(FakeCore(prompt_of(payload, **settled)), request(act, options=(0,)))
    assert (result.notice, result.refused, result.outcome) == (notice, True, Outcome.STALE)


async def test_a_press_received_before_is_not_refused_and_says_so() -> None:
    result = await step(FakeCore(prompt_of(SINGLE), duplicate=True), request(Act.PICK, options=(0,)))
    assert (result.notice, result.refused, result.outcome) == (notices.DUPLICATE, False, Outcome.DUPLICATE)


# Steps: several questions, ticks, text requests ------------------------------------------------------


async def test_several_questions_are_answered_one_at_a_time_through_a_draft() -> None:
    core = FakeCore(prompt_of(SEVERAL))
    first = await step(core, request(Act.PICK, 0, options=(1,)))
    assert (first.notice, first.next, first.outcome) == (
        "Saved. Now question 2 of 2.",
        NextStep(1, {"q1": ["API"]}),
        None,
    )
    assert core.received == [] and core.drafts[questions_draft(PID)] == {"q1": '["API"]'}
    last = await step(core, request(Act.PICK, 1, options=(0,)))
    assert (last.outcome, last.notice) == (Outcome.ANSWERED, "Your answer was recorded: API · dark")
    assert answers_sent(core) == [["API"], ["dark"]]


@pytest.mark.parametrize(
    ("ticked", "after", "notice"), [(frozenset(), {1}, "✓ Chart"), ({1, 2}, {2}, "✗ Chart")]
)
async def test_a_toggle_returns_the_new_ticks_and_answers_nothing(
    ticked: frozenset[int], after: set[int], notice: str
) -> None:
    core = FakeCore(prompt_of(MULTI))
    result = await step(core, request(Act.TOGGLE, options=(1,), ticked=frozenset(ticked)))
    assert (result.ticked, result.notice, result.refused, core.received) == (after, notice, False, [])


async def test_ticks_that_can_no_longer_be_read_are_said_so() -> None:
    result = await step(FakeCore(prompt_of(MULTI)), request(Act.SUBMIT, ticked=None))
    assert (result.notice, result.refused) == (notices.TICKS_UNREADABLE, True)


async def test_a_reply_to_a_text_request_answers_the_question_it_asked() -> None:
    core = FakeCore(prompt_of(FREE))
    assert (await step(core, request(Act.ASK))).notice == notices.REPLY_BELOW
    await step(core, request(Act.ASKED, request="77", anchor="5"))
    assert core.drafts[reply_draft("77")] == {"prompt": PID, "question": "0", "anchor": "5"}

    reply = StepRequest(Act.REPLY, "", ALICE, "ev2", text="Aurora", request="77", thread_id=THREAD)
    result = await step(core, reply)
    assert (result.outcome, result.anchor, answers_sent(core)) == (Outcome.ANSWERED, "5", [["Aurora"]])


async def test_a_reply_to_any_other_message_is_not_taken_by_the_step() -> None:
    reply = StepRequest(Act.REPLY, "", ALICE, "ev2", text="hi", request="78", thread_id=THREAD)
    assert (await step(FakeCore(prompt_of(FREE)), reply)).taken is False


# Forms and URL steps ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pressed", "typed"),
    [
        pytest.param(request(Act.PICK, 0, options=(1,)), "prod", id="choice-title"),
        pytest.param(request(Act.PICK, 2, options=(1,)), "no", id="yes-no"),
        pytest.param(request(Act.SUBMIT, 3, ticked=frozenset({2, 0})), "eu\nap", id="ticks-a-line-each"),
        pytest.param(request(Act.SKIP, 2), "skip", id="skip"),
        pytest.param(request(Act.TEXT, 1, text="3"), "3", id="typed"),
    ],
)
async def test_a_form_field_press_is_the_text_a_person_would_type(pressed: StepRequest, typed: str) -> None:
    core = FakeCore(prompt_of(FORM))
    fields = ["env", "replicas", "notify", "regions"]
    core.drafts[draft_name(PID)] = {name: '"x"' for name in fields[: pressed.index]}
    await step(core, pressed)
    assert core.received[0].text == typed


@pytest.mark.parametrize(
    ("pressed", "fits"),
    [
        (request(Act.PICK, 0, options=(1,)), True),
        (request(Act.PICK, 0, options=(2,)), False),  # only two choices
        (request(Act.ASK, 0), False),  # a choice field has no text request
        (request(Act.SKIP, 0), False),  # Environment is required
        (request(Act.TOGGLE, 0, options=(0,)), False),
        (request(Act.PICK, 4, options=(0,)), False),  # no fifth field
        (request(Act.DECLINE, 3), True),
    ],
)
async def test_a_form_takes_only_the_controls_its_fields_show(pressed: StepRequest, fits: bool) -> None:
    result = await step(FakeCore(prompt_of(FORM)), pressed)
    assert (result.notice != notices.MISMATCH) is fits


async def test_a_form_value_taken_asks_for_the_next_field() -> None:
    core = FakeCore(prompt_of(FORM))
    result = await step(core, request(Act.PICK, 0, options=(1,)))
    assert (result.notice, result.next, result.outcome) == (
        "Saved. Now field 2 of 4.",
        NextStep(1),
        Outcome.KEPT,
    )


async def test_a_press_on_a_field_already_given_moves_the_buttons_on() -> None:
    core = FakeCore(prompt_of(FORM))
    core.drafts[draft_name(PID)] = {"env": '"prod"'}
    result = await step(core, request(Act.PICK, 0, options=(0,)))
    assert (result.notice, result.refused, result.next) == (notices.moved_on(2, 4), True, NextStep(1))
    assert core.received == []


async def test_a_value_the_validator_refuses_keeps_the_field_and_says_why() -> None:
    core = FakeCore(prompt_of(FORM))
    core.drafts[draft_name(PID)] = {"env": '"prod"'}
    result = await step(core, request(Act.TEXT, 1, text="0"))
    assert (result.outcome, result.refused, result.next) == (Outcome.KEPT, True, None)
    assert result.notice.startswith("Not taken: replicas")


async def test_choices_that_look_like_positions_are_picked_by_their_own_title() -> None:
    core = FakeCore(prompt_of(POSITIONS))
    await step(core, request(Act.PICK, 0, options=(0,)))
    result = await step(core, request(Act.SUBMIT, 1, ticked=frozenset({1})))
    assert result.outcome is Outcome.ANSWERED
    assert result.prompt is not None and [a.answer for a in result.prompt.answers or []] == [["2"], ["1"]]


async def test_parts_of_a_long_form_are_kept_until_the_last_hands_it_over() -> None:
    core = FakeCore(prompt_of(FORM))
    part = await step(core, request(Act.FIELDS, fields={"env": ["prod"], "replicas": ["3"]}, final=False))
    assert (part.notice, part.next, core.received) == (
        "Fields 1–2 of 4 are kept. Continue with the rest:",
        NextStep(2),
        [],
    )
    assert (await step(core, request(Act.OPEN))).next == NextStep(0, {"env": ["prod"], "replicas": ["3"]})
    last = await step(core, request(Act.FIELDS, fields={"notify": ["Yes"], "regions": ["eu"]}))
    assert last.outcome is Outcome.ANSWERED
    assert answers_sent(core) == [["prod"], ["3"], ["Yes"], ["eu"]]
    assert pages_draft(PID, ALICE) in core.drafts


async def test_a_form_not_taken_comes_back_with_what_was_given() -> None:
    core = FakeCore(prompt_of(FORM))
    result = await step(core, request(Act.FIELDS, fields={"env": ["prod"], "replicas": ["0"]}))
    assert (result.outcome, result.refused) == (Outcome.KEPT, True)
    assert result.next == NextStep(0, {"env": ["prod"], "replicas": ["0"]})
    assert [error.property for error in result.errors] == ["replicas"]


@pytest.mark.parametrize("payload", [FORM, URL])
async def test_decline_cancels_a_form_or_url_step_and_says_so(payload: dict[str, Any]) -> None:
    core = FakeCore(prompt_of(payload))
    result = await step(core, request(Act.DECLINE))
    assert (result.outcome, result.notice, result.refused) == (Outcome.DECLINED, notices.DECLINED, False)
    assert core.received[0].decline is True


def test_the_notice_of_a_settled_prompt_without_its_record_is_the_plain_one() -> None:
    assert notices.settled(None) == notices.STALE
    assert notices.outcome(Received(Outcome.SUPERSEDED), None, "") == notices.SUPERSEDED
