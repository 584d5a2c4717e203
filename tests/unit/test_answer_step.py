"""The core's answer step: a decoded press, form or reply against each kind of prompt, and what comes of it
(the outcome, the one notice, the next question or field, the drafts). The sink is a fake that reads a
message with the core's own reply reader, so a form's value is checked by the one validator."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

import pytest
import redis.exceptions

from gateway.base.errors import not_found
from gateway.base.models import Answer, InboundMessage, Prompt, PromptRequest, PromptState
from gateway.decision.answer_step import pages_draft, questions_draft, reply_draft, step
from gateway.rules import notices
from gateway.rules.outcomes import Draft, DraftStatus, Outcome, Received
from gateway.rules.replies import ReplyAction, draft_name, read_reply
from gateway.rules.steps import (
    Answers,
    Ask,
    Asked,
    Choose,
    Decline,
    Done,
    Edit,
    Fields,
    NextStep,
    OnQuestion,
    Open,
    Pick,
    Reply,
    Skip,
    Status,
    StepRequest,
    Submit,
    Text,
    Toggle,
)

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


AT: dict[str, Any] = {"prompt_id": PID, "sender": ALICE, "event_id": "ev1"}


def at(**where: Any) -> dict[str, Any]:
    """Who pressed what, and where: ALICE on the prompt, unless said otherwise."""
    return {**AT, **where}


def answers_sent(core: FakeCore) -> list[list[str]]:
    [message] = core.received
    return [entry["answer"] for entry in message.answers or []]


# Answers ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "done", "answers"),
    [
        pytest.param(SINGLE, Pick(**AT, option=1), [["production"]], id="pick"),
        pytest.param(APPROVAL, Pick(**AT, option=0), [["Approve"]], id="approve"),
        pytest.param(SINGLE, Choose(**AT, options=(0,)), [["staging"]], id="choose-one"),
        pytest.param(MULTI, Choose(**AT, options=(2, 0)), [["KPI cards", "Table"]], id="choose-ticks"),
        pytest.param(MULTI, Submit(**AT, ticked=frozenset({2, 0})), [["KPI cards", "Table"]], id="submit"),
        pytest.param(MULTI, Submit(**AT, ticked=frozenset()), [[]], id="submit-none"),
        pytest.param(SINGLE, Text(**AT, text="  canary \n"), [["  canary \n"]], id="other-verbatim"),
        pytest.param(FREE, Text(**AT, text="Aurora"), [["Aurora"]], id="free-text"),
        pytest.param(SEVERAL, Answers(**AT, lists=[["API"], ["dark"]]), [["API"], ["dark"]], id="answers"),
        pytest.param(URL, Done(**AT), [["done"]], id="url-done"),
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
        pytest.param(SINGLE, Pick(**AT, option=2), id="option-out-of-range"),
        pytest.param(SINGLE, Pick(**AT, index=1, option=0), id="question-out-of-range"),
        pytest.param(SINGLE, Pick(**AT, option=-1), id="pick-without-option"),
        pytest.param(MULTI, Pick(**AT, option=0), id="pick-on-a-multi-select"),
        pytest.param(SINGLE, Submit(**AT), id="submit-on-a-single-select"),
        pytest.param(MULTI, Submit(**AT, ticked=frozenset({9})), id="ticked-out-of-range"),
        pytest.param(MULTI, Submit(**AT, ticked=frozenset({-1})), id="ticked-of-another-prompt"),
        pytest.param(SINGLE, Choose(**AT, options=(0, 1)), id="two-on-a-single-select"),
        pytest.param(SINGLE, Choose(**AT, options=()), id="nothing-on-a-single-select"),
        pytest.param(MULTI, Choose(**AT, options=(0, 0)), id="repeated-value"),
        pytest.param(APPROVAL, Choose(**AT, options=(0,)), id="select-on-an-approval"),
        pytest.param(SINGLE, Edit(**AT, fields={"command": ["ls"]}), id="edit-on-a-question"),
        pytest.param(FREE, Pick(**AT, option=0), id="pick-on-free-text"),
        pytest.param(SEVERAL, Answers(**AT, lists=[["API"]]), id="answers-short"),
        pytest.param(SINGLE, Done(**AT), id="done-on-a-question"),
        pytest.param(SINGLE, Decline(**AT), id="decline-on-a-question"),
        pytest.param(URL, Pick(**AT, option=0), id="pick-on-a-url-step"),
        pytest.param(FORM, Done(**AT), id="done-on-a-form"),
        pytest.param(SINGLE, Pick(**AT, option=0, thread_id="slack:C9:9.0"), id="another-thread"),
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
    result = await step(core, Text(**AT, text="use the staging copy"))
    assert result.outcome is Outcome.ANSWERED
    [sent] = core.received
    assert (sent.answers, sent.note) == (
        [{"question": "Deploy?", "question_id": "q1", "answer": ["Deny"]}],
        "use the staging copy",
    )


async def test_an_edit_form_on_an_approval_raised_editable_approves_with_the_typed_arguments() -> None:
    call = {"name": "Bash", "arguments": {"command": "rm -rf build", "timeout": 30}}
    core = FakeCore(prompt_of(APPROVAL, tool_call=call, editable=True))
    await step(core, Edit(**AT, fields={"command": ["rm -rf build/tmp"], "timeout": ["5"]}))
    [sent] = core.received
    assert sent.arguments == {"command": "rm -rf build/tmp", "timeout": 5}


async def test_an_edit_form_on_an_approval_not_raised_editable_is_refused_before_the_core() -> None:
    core = FakeCore(prompt_of(APPROVAL, tool_call={"name": "Bash", "arguments": {"command": "ls"}}))
    result = await step(core, Edit(**AT, fields={"command": ["rm -rf /"]}))
    assert result.refused and core.received == []


async def test_an_empty_text_answer_is_refused() -> None:
    core = FakeCore(prompt_of(FREE))
    result = await step(core, Text(**AT, text="   "))
    assert (result.notice, result.refused, core.received) == (notices.EMPTY_TEXT, True, [])


async def test_a_press_on_a_prompt_nobody_raised_says_so() -> None:
    result = await step(FakeCore(None), Pick(**AT, option=0))
    assert (result.notice, result.refused) == (notices.UNKNOWN_PROMPT, True)


async def test_a_store_outage_asks_to_try_again() -> None:
    class Down(FakeCore):
        async def get_prompt(self, prompt_id: str) -> Prompt:
            raise redis.exceptions.ConnectionError("redis down")

    result = await step(Down(prompt_of(SINGLE)), Pick(**AT, option=0))
    assert (result.notice, result.refused) == (notices.TRY_AGAIN, True)


async def test_a_bug_is_logged_with_its_traceback_and_never_blamed_on_the_store(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Buggy(FakeCore):
        async def receive(self, message: InboundMessage) -> Received:
            raise KeyError("a slip of ours")

    with caplog.at_level(logging.ERROR, logger="threadgate"):
        result = await step(Buggy(prompt_of(SINGLE)), Pick(**AT, option=0))
    assert (result.notice, result.refused) == (notices.WENT_WRONG, True)
    assert result.notice != notices.TRY_AGAIN
    [logged] = [record for record in caplog.records if record.getMessage() == "answer_step.bug"]
    fields = logged.__dict__["fields"]
    assert fields["error"] == "KeyError" and "a slip of ours" in fields["traceback"]


# Who may answer, and prompts that settled --------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "pressed"),
    [
        pytest.param(SINGLE, Pick(**at(sender=EVE), option=0), id="pick"),
        pytest.param(MULTI, Toggle(**at(sender=EVE), option=0, ticked=frozenset()), id="toggle"),
        pytest.param(SEVERAL, Pick(**at(sender=EVE), option=0), id="step-of-several"),
        pytest.param(FREE, Ask(**at(sender=EVE)), id="text-request"),
        pytest.param(FORM, Pick(**at(sender=EVE), option=0), id="form-field"),
        pytest.param(URL, Decline(**at(sender=EVE)), id="decline"),
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
@pytest.mark.parametrize(
    "pressed",
    [Pick(**AT, option=0), Toggle(**AT, option=0, ticked=frozenset()), Open(**AT)],
    ids=["pick", "toggle", "open"],
)
async def test_a_press_on_a_settled_prompt_says_how_it_settled(
    settled: dict[str, Any], notice: str, pressed: StepRequest
) -> None:
    payload = MULTI if isinstance(pressed, Toggle) else SINGLE
    result = await step(FakeCore(prompt_of(payload, **settled)), pressed)
    assert (result.notice, result.refused, result.outcome) == (notice, True, Outcome.STALE)


async def test_a_press_received_before_is_not_refused_and_says_so() -> None:
    result = await step(FakeCore(prompt_of(SINGLE), duplicate=True), Pick(**AT, option=0))
    assert (result.notice, result.refused, result.outcome) == (notices.DUPLICATE, False, Outcome.DUPLICATE)


# Steps: several questions, ticks, text requests ------------------------------------------------------


async def test_several_questions_are_answered_one_at_a_time_through_a_draft() -> None:
    core = FakeCore(prompt_of(SEVERAL))
    first = await step(core, Pick(**AT, index=0, option=1))
    assert (first.notice, first.next, first.outcome) == (
        "Saved. Now question 2 of 2.",
        NextStep(1, {"q1": ["API"]}),
        None,
    )
    assert core.received == [] and core.drafts[questions_draft(PID)] == {"q1": '["API"]'}
    last = await step(core, Pick(**AT, index=1, option=0))
    assert (last.outcome, last.notice) == (Outcome.ANSWERED, "Your answer was recorded: API · dark")
    assert answers_sent(core) == [["API"], ["dark"]]


@pytest.mark.parametrize(
    ("ticked", "after", "notice"), [(frozenset(), {1}, "✓ Chart"), ({1, 2}, {2}, "✗ Chart")]
)
async def test_a_toggle_returns_the_new_ticks_and_answers_nothing(
    ticked: frozenset[int], after: set[int], notice: str
) -> None:
    core = FakeCore(prompt_of(MULTI))
    result = await step(core, Toggle(**AT, option=1, ticked=frozenset(ticked)))
    assert (result.ticked, result.notice, result.refused, core.received) == (after, notice, False, [])


async def test_ticks_that_can_no_longer_be_read_are_said_so() -> None:
    result = await step(FakeCore(prompt_of(MULTI)), Submit(**AT, ticked=None))
    assert (result.notice, result.refused) == (notices.TICKS_UNREADABLE, True)


async def test_a_reply_to_a_text_request_answers_the_question_it_asked() -> None:
    core = FakeCore(prompt_of(FREE))
    assert (await step(core, Ask(**AT))).notice == notices.REPLY_BELOW
    await step(core, Asked(**AT, request="77", anchor="5"))
    assert core.drafts[reply_draft("77")] == {"prompt": PID, "question": "0", "anchor": "5"}

    said = InboundMessage(thread_id=THREAD, sender=ALICE, text="Aurora", event_id="ev2")
    result = await step(core, Reply(message=said, request="77"))
    assert (result.outcome, result.anchor, answers_sent(core)) == (Outcome.ANSWERED, "5", [["Aurora"]])


async def test_a_reply_to_any_other_message_is_received_once_as_typed() -> None:
    core = FakeCore(prompt_of(FREE))
    said = InboundMessage(thread_id=THREAD, sender=ALICE, text="hi", event_id="ev2", prompt_id=PID)
    result = await step(core, Reply(message=said, request="78"))
    assert (result.status, core.received) == (Status.TYPED, [said])


# Forms and URL steps ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pressed", "typed"),
    [
        pytest.param(Pick(**AT, index=0, option=1), "prod", id="choice-title"),
        pytest.param(Pick(**AT, index=2, option=1), "no", id="yes-no"),
        pytest.param(Submit(**AT, index=3, ticked=frozenset({2, 0})), "eu\nap", id="ticks-a-line-each"),
        pytest.param(Skip(**AT, index=2), "skip", id="skip"),
        pytest.param(Text(**AT, index=1, text="3"), "3", id="typed"),
    ],
)
async def test_a_form_field_press_is_the_text_a_person_would_type(pressed: OnQuestion, typed: str) -> None:
    core = FakeCore(prompt_of(FORM))
    fields = ["env", "replicas", "notify", "regions"]
    core.drafts[draft_name(PID)] = {name: '"x"' for name in fields[: pressed.index]}
    await step(core, pressed)
    assert core.received[0].text == typed


@pytest.mark.parametrize(
    ("pressed", "fits"),
    [
        (Pick(**AT, index=0, option=1), True),
        (Pick(**AT, index=0, option=2), False),  # only two choices
        (Ask(**AT, index=0), False),  # a choice field has no text request
        (Skip(**AT, index=0), False),  # Environment is required
        (Toggle(**AT, index=0, option=0, ticked=frozenset()), False),
        (Pick(**AT, index=4, option=0), False),  # no fifth field
        (Decline(**AT), True),
    ],
)
async def test_a_form_takes_only_the_controls_its_fields_show(pressed: StepRequest, fits: bool) -> None:
    result = await step(FakeCore(prompt_of(FORM)), pressed)
    assert (result.notice != notices.MISMATCH) is fits


async def test_a_form_value_taken_asks_for_the_next_field() -> None:
    core = FakeCore(prompt_of(FORM))
    result = await step(core, Pick(**AT, index=0, option=1))
    assert (result.notice, result.next, result.outcome) == (
        "Saved. Now field 2 of 4.",
        NextStep(1),
        Outcome.KEPT,
    )


async def test_a_press_on_a_field_already_given_moves_the_buttons_on() -> None:
    core = FakeCore(prompt_of(FORM))
    core.drafts[draft_name(PID)] = {"env": '"prod"'}
    result = await step(core, Pick(**AT, index=0, option=0))
    assert (result.notice, result.refused, result.next) == (notices.moved_on(2, 4), True, NextStep(1))
    assert core.received == []


async def test_a_value_the_validator_refuses_keeps_the_field_and_says_why() -> None:
    core = FakeCore(prompt_of(FORM))
    core.drafts[draft_name(PID)] = {"env": '"prod"'}
    result = await step(core, Text(**AT, index=1, text="0"))
    assert (result.outcome, result.refused, result.next) == (Outcome.KEPT, True, None)
    assert result.notice.startswith("Not taken: replicas")


async def test_choices_that_look_like_positions_are_picked_by_their_own_title() -> None:
    core = FakeCore(prompt_of(POSITIONS))
    await step(core, Pick(**AT, index=0, option=0))
    result = await step(core, Submit(**AT, index=1, ticked=frozenset({1})))
    assert result.outcome is Outcome.ANSWERED
    assert result.prompt is not None and [a.answer for a in result.prompt.answers or []] == [["2"], ["1"]]


async def test_parts_of_a_long_form_are_kept_until_the_last_hands_it_over() -> None:
    core = FakeCore(prompt_of(FORM))
    part = await step(core, Fields(**AT, fields={"env": ["prod"], "replicas": ["3"]}, final=False))
    assert (part.notice, part.next, core.received) == (
        "Fields 1–2 of 4 are kept. Continue with the rest:",
        NextStep(2),
        [],
    )
    assert (await step(core, Open(**AT))).next == NextStep(0, {"env": ["prod"], "replicas": ["3"]})
    last = await step(core, Fields(**AT, fields={"notify": ["Yes"], "regions": ["eu"]}))
    assert last.outcome is Outcome.ANSWERED
    assert answers_sent(core) == [["prod"], ["3"], ["Yes"], ["eu"]]
    assert pages_draft(PID, ALICE) in core.drafts


async def test_a_form_not_taken_comes_back_with_what_was_given() -> None:
    core = FakeCore(prompt_of(FORM))
    result = await step(core, Fields(**AT, fields={"env": ["prod"], "replicas": ["0"]}))
    assert (result.outcome, result.refused) == (Outcome.KEPT, True)
    assert result.next == NextStep(0, {"env": ["prod"], "replicas": ["0"]})
    assert [error.property for error in result.errors] == ["replicas"]


@pytest.mark.parametrize("payload", [FORM, URL])
async def test_decline_cancels_a_form_or_url_step_and_says_so(payload: dict[str, Any]) -> None:
    core = FakeCore(prompt_of(payload))
    result = await step(core, Decline(**AT))
    assert (result.outcome, result.notice, result.refused) == (Outcome.DECLINED, notices.DECLINED, False)
    assert core.received[0].decline is True


def test_the_notice_of_a_settled_prompt_without_its_record_is_the_plain_one() -> None:
    assert notices.settled(None) == notices.STALE
    assert notices.outcome(Received(Outcome.SUPERSEDED), None, "") == notices.SUPERSEDED
