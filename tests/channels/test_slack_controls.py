"""Native prompt controls on Slack, end to end: the real slack-bolt and slack_sdk against the fake Slack.

Every press is made on a control found in the message the fake received (or the modal it opened), the
way a person would press it; the answers checked are the ones the agent receives.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest
from starlette.applications import Starlette

from channels.slack import SlackChannel
from channels.slack.answer_modal import NOT_BOTH, OTHER_LABEL, PICK_ONE
from channels.slack.notices import BUSY_ERROR
from gateway.base.errors import not_found
from gateway.base.ids import new_id, parse_thread_id
from gateway.base.models import (
    InboundMessage,
    Option,
    Prompt,
    PromptKind,
    PromptRequest,
    PromptState,
    Question,
    ToolCall,
    utcnow,
)
from gateway.decision import answer_step
from gateway.decision.service import Gateway, Outcome, Received
from gateway.delivery.channel import ChannelContext
from gateway.delivery.lease import Lease
from gateway.rules import notices
from gateway.rules.outcomes import Draft
from gateway.rules.render import pending_prompt_item
from gateway.rules.steps import StepRequest, StepResult
from tests.channels.conftest import ServeApp
from tests.channels.slack_support import (
    ALICE,
    BOB,
    CHANNEL,
    EVE,
    SECTIONS,
    TARGET,
    SlackGateway,
    slack_gateway,
)
from tests.fakes.slack import FakeSlack

DROP = PromptRequest(
    kind=PromptKind.APPROVAL,
    questions=[Question(question="Allow db__drop to run?")],
    tool_call=ToolCall(name="db__drop", arguments={"database": "staging", "table": "users"}),
)
REGIONS = PromptRequest(
    kind=PromptKind.ASK_USER_QUESTION,
    questions=[
        Question(
            question="Which region?",
            options=[Option(label=f"region-{number}") for number in range(1, 8)],
        )
    ],
)
WIDGETS = PromptRequest(
    kind=PromptKind.ASK_USER_QUESTION,
    questions=[
        Question(
            question="Which widgets?",
            multi_select=True,
            options=[Option(label=f"widget {number}") for number in range(1, 13)],
        )
    ],
)
NOTE = PromptRequest(kind=PromptKind.TEXT, questions=[Question(question="What should the release note say?")])
DASHBOARD = PromptRequest(
    kind=PromptKind.ASK_USER_QUESTION,
    questions=[
        Question(
            question="Where should the data come from?",
            options=[Option(label="CSV import"), Option(label="Database"), Option(label="API")],
        ),
        Question(
            question="Which sections?",
            multi_select=True,
            options=[Option(label="KPI cards"), Option(label="Chart"), Option(label="Table")],
        ),
        Question(question="Any preference for visual style?"),
    ],
)


@pytest.fixture
async def gw(fake_slack: FakeSlack, real_redis: str) -> AsyncIterator[SlackGateway]:
    async with slack_gateway(fake_slack, real_redis) as gateway:
        yield gateway


@pytest.fixture
async def socket_gw(fake_slack: FakeSlack, real_redis: str) -> AsyncIterator[SlackGateway]:
    """The gateway taking Slack's events over Socket Mode alone, its socket connected."""
    async with slack_gateway(fake_slack, real_redis, http=False, socket_mode=True) as gateway:
        await fake_slack.wait_sockets(1)
        yield gateway


async def ask(gw: SlackGateway, request: PromptRequest) -> tuple[Prompt, dict[str, Any]]:
    """Alice mentions the app, the agent asks ``request`` in that thread: the prompt and its message."""
    thread_ts = await gw.open_thread()
    prompt = await gw.ask(f"slack:{CHANNEL}:{thread_ts}", request)
    [message] = gw.fake.posted(thread_ts)
    return prompt, message


async def handled(*gateways: SlackGateway) -> None:
    """Wait until every press taken has been handled and everything owed to the chat was posted."""
    for gateway in gateways:
        await gateway.channel.presses.idle()
    for gateway in gateways:
        await gateway.settled()


async def answers(gw: SlackGateway, prompt: Prompt) -> list[list[str]] | None:
    settled = await gw.runtime.gateway.get_prompt(prompt.prompt_id)
    return [answer.answer for answer in settled.answers] if settled.answers is not None else None


async def pending(gw: SlackGateway, prompt: Prompt) -> bool:
    return (await gw.runtime.gateway.get_prompt(prompt.prompt_id)).pending


def controls(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [block for block in message["blocks"] if block["type"] == "actions"]


def section_texts(message: dict[str, Any]) -> list[str]:
    return [block["text"]["text"] for block in message["blocks"] if block["type"] == "section"]


def context_texts(message: dict[str, Any]) -> list[str]:
    """The small print under a message: who answered, part marks."""
    blocks = [block for block in message["blocks"] if block["type"] == "context"]
    return [element["text"] for block in blocks for element in block["elements"]]


async def press(gw: SlackGateway, message: dict[str, Any], label: str, **kwargs: Any) -> None:
    assert await gw.fake.press(gw.events_url, message, label, **kwargs) == 200
    await handled(gw)


async def open_form(gw: SlackGateway, message: dict[str, Any], label: str, **kwargs: Any) -> dict[str, Any]:
    await press(gw, message, label, **kwargs)
    return gw.fake.opened_views()[-1]


# Each kind and variant, answered by its controls --------------------------------------------------------


@pytest.mark.parametrize("label", ["Approve", "Deny"])
async def test_approval_buttons_answer_with_their_label(gw: SlackGateway, label: str) -> None:
    prompt, message = await ask(gw, DROP)
    await press(gw, message, label, user=ALICE)

    assert await answers(gw, prompt) == [[label]]
    settled = await gw.runtime.gateway.get_prompt(prompt.prompt_id)
    assert settled.answered_by == f"slack:{ALICE}"
    assert gw.fake.private_notices() == [f"Your answer was recorded: {label}"]


async def test_approval_shows_the_real_tool_call_below_the_unchanged_text(gw: SlackGateway) -> None:
    _, message = await ask(gw, DROP)
    assert section_texts(message) == ["Allow db__drop to run?\n  1. Approve\n  2. Deny"]
    [call] = [block for block in message["blocks"] if block["type"] == "rich_text"]
    heading, arguments = call["elements"]
    assert [part["text"] for part in heading["elements"]] == ["Tool call: ", "db__drop"]
    assert json.loads(arguments["elements"][0]["text"]) == {"database": "staging", "table": "users"}


async def test_long_tool_call_arguments_are_cut_visibly(gw: SlackGateway) -> None:
    huge = DROP.model_copy(update={"tool_call": ToolCall(name="db__drop", arguments={"sql": "x" * 5000})})
    _, message = await ask(gw, huge)
    [call] = [block for block in message["blocks"] if block["type"] == "rich_text"]
    shown = call["elements"][1]["elements"][0]["text"]
    assert len(shown) < 3000
    assert shown.endswith("more characters not shown")


async def test_single_select_buttons_answer_with_the_option_pressed(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, TARGET)
    [buttons] = controls(message)
    assert [element["text"]["text"] for element in buttons["elements"]] == [
        "staging",
        "production",
        "Other…",
        "Claim",
    ]

    await press(gw, message, "production", user=ALICE)
    assert await answers(gw, prompt) == [["production"]]


async def test_single_select_past_five_options_is_a_select_menu(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, REGIONS)
    [row] = controls(message)
    assert [element["type"] for element in row["elements"]] == [
        "static_select",
        "button",
        "button",
    ]  # Other…, Claim

    await press(gw, message, "region-6", user=ALICE)
    assert await answers(gw, prompt) == [["region-6"]]


async def test_multi_select_submit_answers_with_the_ticked_boxes(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, SECTIONS)
    await press(gw, message, "Chart", user=ALICE)  # ticking a box answers nothing yet
    assert await pending(gw, prompt)
    assert gw.fake.private_notices() == []

    await press(gw, message, "Submit", user=ALICE, ticked=["Table", "KPI cards"])
    assert await answers(gw, prompt) == [["KPI cards", "Table"]]


async def test_multi_select_submit_with_nothing_ticked_answers_no_labels(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, SECTIONS)
    await press(gw, message, "Submit", user=ALICE)
    assert await answers(gw, prompt) == [[]]


async def test_multi_select_past_ten_options_is_a_multi_select_menu(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, WIDGETS)
    assert controls(message)[0]["elements"][0]["type"] == "multi_static_select"
    await press(gw, message, "Submit", user=ALICE, ticked=["widget 11", "widget 2"])
    assert await answers(gw, prompt) == [["widget 2", "widget 11"]]


async def test_other_on_a_single_select_collects_free_text_in_a_modal(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, TARGET)
    view = await open_form(gw, message, "Other…", user=ALICE)
    assert view["private_metadata"] == prompt.prompt_id

    assert await gw.fake.submit(gw.events_url, view, user=ALICE, fill={OTHER_LABEL: "canary first"}) == {}
    await handled(gw)
    assert await answers(gw, prompt) == [["canary first"]]
    assert gw.fake.private_notices() == ["Your answer was recorded: canary first"]


async def test_other_on_a_multi_select_keeps_the_ticked_boxes_and_adds_the_text(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, SECTIONS)
    view = await open_form(gw, message, "Other…", user=ALICE, ticked=["Chart"])

    await gw.fake.submit(gw.events_url, view, user=ALICE, fill={OTHER_LABEL: "Gauges"})
    await handled(gw)
    assert await answers(gw, prompt) == [["Chart", "Gauges"]]


async def test_free_text_prompt_opens_a_text_box(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, NOTE)
    view = await open_form(gw, message, "Answer…", user=ALICE)

    fill = {"What should the release note say?": "Faster dashboards.\n\nFixes the CSV bug."}
    await gw.fake.submit(gw.events_url, view, user=ALICE, fill=fill)
    await handled(gw)
    assert await answers(gw, prompt) == [["Faster dashboards.\n\nFixes the CSV bug."]]


async def test_several_questions_are_answered_in_one_form_each_with_its_own_answer(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, DASHBOARD)
    assert [element["text"]["text"] for element in controls(message)[0]["elements"]] == ["Answer…", "Claim"]
    view = await open_form(gw, message, "Answer…", user=ALICE)

    fill: dict[str, list[str] | str] = {
        "Where should the data come from?": ["CSV import"],
        "Which sections?": ["KPI cards", "Table"],
        "Any preference for visual style?": "dark theme",
    }
    await gw.fake.submit(gw.events_url, view, user=ALICE, fill=fill)
    await handled(gw)
    assert await answers(gw, prompt) == [["CSV import"], ["KPI cards", "Table"], ["dark theme"]]
    audit = gw.fake.posted(message["thread_ts"])[-1]
    assert audit["text"] == "✓ Answered: CSV import · KPI cards, Table · dark theme"


async def test_other_answer_in_a_form_of_several_questions_answers_that_question(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, DASHBOARD)
    view = await open_form(gw, message, "Answer…", user=ALICE)
    fill: dict[str, list[str] | str] = {
        f"{OTHER_LABEL} (Where should the data come from?)": "a Google Sheet",
        "Any preference for visual style?": "light",
    }
    await gw.fake.submit(gw.events_url, view, user=ALICE, fill=fill)
    await handled(gw)
    assert await answers(gw, prompt) == [["a Google Sheet"], [], ["light"]]


@pytest.mark.parametrize(
    ("fill", "errors"),
    [
        pytest.param({}, {"q0": PICK_ONE}, id="neither-option-nor-text"),
        pytest.param(
            {"What's the deployment target?": ["staging"], OTHER_LABEL: "canary"}, {"o0": NOT_BOTH}, id="both"
        ),
    ],
)
async def test_incomplete_form_stays_open_with_the_problem_shown(
    gw: SlackGateway, fill: dict[str, list[str] | str], errors: dict[str, str]
) -> None:
    prompt, message = await ask(gw, TARGET)
    view = await open_form(gw, message, "Other…", user=ALICE)
    answer = await gw.fake.submit(gw.events_url, view, user=ALICE, fill=fill)
    assert answer == {"response_action": "errors", "errors": errors}
    await handled(gw)
    assert await pending(gw, prompt)


# Who may press, and which controls still count ------------------------------------------------------------


async def test_press_by_someone_not_allowed_leaves_the_prompt_pending_and_tells_them_privately(
    gw: SlackGateway,
) -> None:
    await gw.approvers(f"slack:{BOB}")
    prompt, message = await ask(gw, DROP)

    await press(gw, message, "Approve", user=EVE)
    assert await pending(gw, prompt)
    assert gw.fake.private_notices() == [notices.NOT_ALLOWED]
    assert controls(gw.fake.message(message))  # still answerable

    await press(gw, message, "Approve", user=BOB)
    settled = await gw.runtime.gateway.get_prompt(prompt.prompt_id)
    assert (settled.answered_by, await answers(gw, prompt)) == (f"slack:{BOB}", [["Approve"]])


async def test_form_submitted_by_someone_not_allowed_is_not_an_answer(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, NOTE)
    view = await open_form(gw, message, "Answer…", user=EVE)
    await gw.fake.submit(gw.events_url, view, user=EVE, fill={"What should the release note say?": "lgtm"})
    await handled(gw)

    assert await pending(gw, prompt)
    [notice] = gw.fake.ephemerals()
    assert (notice["user"], notice["text"], notice["thread_ts"]) == (
        EVE,
        notices.NOT_ALLOWED,
        message["thread_ts"],
    )


async def test_press_on_a_superseded_prompt_is_refused_privately_and_changes_nothing(
    gw: SlackGateway,
) -> None:
    old, old_message = await ask(gw, TARGET)
    thread_id = f"slack:{CHANNEL}:{old_message['thread_ts']}"
    new = await gw.ask(thread_id, DROP)
    await gw.settled()

    await press(gw, old_message, "staging", user=ALICE)
    assert await pending(gw, new)
    superseded = await gw.runtime.gateway.get_prompt(old.prompt_id)
    assert (superseded.prompt_state, superseded.reason_code) == (PromptState.CANCELLED, "superseded")
    [notice] = gw.fake.private_notices()
    assert notice.startswith("This prompt was cancelled") and notice.endswith("nothing was changed.")


async def test_other_on_a_settled_prompt_opens_no_form(gw: SlackGateway) -> None:
    _, message = await ask(gw, TARGET)
    await press(gw, message, "staging", user=ALICE)
    await press(gw, message, "Other…", user=ALICE)
    assert gw.fake.opened_views() == []
    assert (
        gw.fake.private_notices()[-1] == "This prompt was already answered (staging), so nothing was changed."
    )


class Recording:
    """The core's own receive wrapped: what the answer step handed to it."""

    def __init__(self, gateway: Gateway) -> None:
        self.receive = gateway.receive
        self.received: list[InboundMessage] = []

    async def __call__(self, message: InboundMessage) -> Received:
        self.received.append(message)
        return await self.receive(message)


@pytest.mark.parametrize(
    ("label", "forge", "notice"),
    [
        pytest.param("production", lambda pid: f"{pid}.0.7", notices.MISMATCH, id="option-out-of-range"),
        pytest.param("production", lambda pid: f"{pid}.3.1", notices.MISMATCH, id="question-out-of-range"),
        pytest.param(
            "production",
            lambda pid: "prm_01JAAAAAAAAAAAAAAAAAAAAAAA.0.1",
            notices.UNKNOWN_PROMPT,
            id="unknown-prompt",
        ),
        pytest.param(
            "production", lambda pid: "production", notices.MISMATCH, id="label-instead-of-reference"
        ),
        pytest.param("Other…", lambda pid: f"{pid}.0.1", notices.MISMATCH, id="opener-with-an-option"),
    ],
)
async def test_tampered_control_data_is_refused_and_never_reaches_the_core(
    gw: SlackGateway, label: str, forge: Any, notice: str
) -> None:
    prompt, message = await ask(gw, TARGET)
    recording = Recording(gw.runtime.gateway)
    gw.runtime.gateway.receive = recording  # type: ignore[method-assign]

    await press(gw, message, label, user=ALICE, value=forge(prompt.prompt_id))
    assert recording.received == []
    assert await pending(gw, prompt)
    assert gw.fake.private_notices() == [notice]
    assert gw.fake.opened_views() == []


async def test_control_of_a_prompt_in_another_thread_is_refused(gw: SlackGateway) -> None:
    elsewhere, _ = await ask(gw, TARGET)
    prompt, message = await ask(gw, TARGET)
    await press(gw, message, "staging", user=ALICE, value=f"{elsewhere.prompt_id}.0.0")
    assert await pending(gw, elsewhere) and await pending(gw, prompt)
    assert gw.fake.private_notices() == [notices.MISMATCH]


async def test_form_with_a_forged_prompt_reference_is_refused_in_the_form(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, NOTE)
    view = await open_form(gw, message, "Answer…", user=ALICE)
    forged = {**view, "private_metadata": "prm_01JAAAAAAAAAAAAAAAAAAAAAAA"}
    answer = await gw.fake.submit(
        gw.events_url, forged, user=ALICE, fill={"What should the release note say?": "x"}
    )
    assert answer["response_action"] == "update"
    assert notices.UNKNOWN_PROMPT in json.dumps(answer["view"])
    assert await pending(gw, prompt)


# After the prompt settles ----------------------------------------------------------------------------------


async def test_answered_prompt_shows_its_outcome_and_loses_its_controls(gw: SlackGateway) -> None:
    _, message = await ask(gw, TARGET)
    await press(gw, message, "staging", user=ALICE)

    now = gw.fake.message(message)
    assert controls(now) == []
    assert section_texts(now) == [section_texts(message)[0], "✓ Answered: staging"]
    assert context_texts(now) == [f"Answered by <@{ALICE}>"]  # a mention: Slack shows her name
    [update] = gw.fake.calls_to("chat.update")
    assert (update.params["channel"], update.params["ts"]) == (CHANNEL, message["ts"])
    audit = gw.fake.posted(message["thread_ts"])[-1]
    assert (audit["text"], audit["thread_ts"]) == ("✓ Answered: staging", message["thread_ts"])
    assert (section_texts(audit), context_texts(audit)) == (
        ["✓ Answered: staging"],
        [f"Answered by <@{ALICE}>"],
    )


@pytest.mark.parametrize(("label", "line"), [("Approve", "Approved by"), ("Deny", "Denied by")])
async def test_an_approval_says_who_approved_or_denied_it(gw: SlackGateway, label: str, line: str) -> None:
    _, message = await ask(gw, DROP)
    await press(gw, message, label, user=ALICE)

    assert context_texts(gw.fake.message(message)) == [f"{line} <@{ALICE}>"]
    audit = gw.fake.posted(message["thread_ts"])[-1]
    assert (audit["text"], context_texts(audit)) == (f"✓ Answered: {label}", [f"{line} <@{ALICE}>"])


async def test_an_answer_given_through_the_api_names_that_identity(gw: SlackGateway) -> None:
    await gw.approvers("web:ops<lead>")
    prompt, message = await ask(gw, TARGET)

    await gw.runtime.gateway.answer(prompt.prompt_id, "web:ops<lead>", text="production")
    await handled(gw)

    by = "Answered by web:ops&lt;lead&gt;"  # escaped: it reads as written, never as markup
    assert context_texts(gw.fake.message(message)) == [by]
    assert context_texts(gw.fake.posted(message["thread_ts"])[-1]) == [by]


async def test_a_cancelled_prompt_names_nobody(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, TARGET)
    await gw.runtime.gateway.end_run(prompt.run_id)
    await handled(gw)
    assert context_texts(gw.fake.message(message)) == []
    assert context_texts(gw.fake.posted(message["thread_ts"])[-1]) == []


async def test_typed_answer_also_retires_the_controls(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, TARGET)
    assert await gw.deliver(gw.reply(message["thread_ts"], "2")) == 200
    await handled(gw)
    assert await answers(gw, prompt) == [["production"]]
    assert controls(gw.fake.message(message)) == []


async def test_cancelled_prompt_shows_why_and_loses_its_controls(gw: SlackGateway) -> None:
    prompt, message = await ask(gw, DROP)
    await gw.runtime.gateway.end_run(prompt.run_id)
    await handled(gw)
    now = gw.fake.message(message)
    assert controls(now) == []
    assert section_texts(now)[-1] == "✗ Cancelled: the run ended"

    await press(gw, message, "Approve", user=ALICE)  # a client that has not redrawn the message yet
    assert (await gw.runtime.gateway.get_prompt(prompt.prompt_id)).prompt_state is PromptState.CANCELLED
    assert gw.fake.private_notices() == ["This prompt was cancelled (the run ended), so nothing was changed."]


# Several processes, redeliveries, Socket Mode -------------------------------------------------------------


async def test_two_presses_racing_on_two_gateway_processes_give_one_answer(
    fake_slack: FakeSlack, real_redis: str
) -> None:
    async with (
        slack_gateway(fake_slack, real_redis) as first,
        slack_gateway(fake_slack, real_redis) as second,
    ):
        await first.approvers(f"slack:{BOB}")
        thread_ts = await first.open_thread()
        for _round in range(3):
            prompt = await first.ask(f"slack:{CHANNEL}:{thread_ts}", TARGET)
            message = fake_slack.posted(thread_ts)[-1]
            statuses = await asyncio.gather(
                fake_slack.press(first.events_url, message, "staging", user=ALICE),
                fake_slack.press(second.events_url, message, "production", user=BOB),
            )
            assert list(statuses) == [200, 200]
            await handled(first, second)

            settled = await first.runtime.gateway.get_prompt(prompt.prompt_id)
            winner = {f"slack:{ALICE}": "staging", f"slack:{BOB}": "production"}[settled.answered_by or ""]
            assert await answers(first, prompt) == [[winner]]
            updates = [
                call for call in fake_slack.calls_to("chat.update") if call.params["ts"] == message["ts"]
            ]
            assert len(updates) == 1
            audits = [m for m in fake_slack.posted(thread_ts) if m["text"].startswith("✓ Answered")]
            assert audits[-1]["text"] == f"✓ Answered: {winner}"
        assert len(audits) == 3
        notices = fake_slack.private_notices()
        assert (
            sorted(notice.startswith("Your answer was recorded") for notice in notices)
            == [False] * 3 + [True] * 3
        )


async def test_press_over_socket_mode_and_its_redelivery_answer_once(
    fake_slack: FakeSlack, socket_gw: SlackGateway
) -> None:
    thread_ts = "1712345678.000100"
    prompt = await socket_gw.ask(f"slack:{CHANNEL}:{thread_ts}", DROP)
    [message] = fake_slack.posted(thread_ts)

    payload = fake_slack.press_payload(message, "Deny", user=ALICE)
    assert "envelope_id" in await fake_slack.push(payload, envelope_type="interactive")
    await fake_slack.push(payload, envelope_type="interactive", retry_attempt=1)
    await handled(socket_gw)

    assert await answers(socket_gw, prompt) == [["Deny"]]
    # Both deliveries are handled at once; whichever comes second is the duplicate.
    assert sorted(fake_slack.private_notices()) == [notices.DUPLICATE, "Your answer was recorded: Deny"]
    assert controls(fake_slack.message(message)) == []


async def test_form_over_socket_mode_is_acknowledged_with_its_errors(
    fake_slack: FakeSlack, socket_gw: SlackGateway
) -> None:
    thread_ts = "1712345678.000100"
    prompt = await socket_gw.ask(f"slack:{CHANNEL}:{thread_ts}", TARGET)
    [message] = fake_slack.posted(thread_ts)
    await fake_slack.push(
        fake_slack.press_payload(message, "Other…", user=ALICE), envelope_type="interactive"
    )
    await handled(socket_gw)
    [view] = fake_slack.opened_views()

    ack = await fake_slack.push(fake_slack.submit_payload(view, user=ALICE), envelope_type="interactive")
    assert ack["payload"] == {"response_action": "errors", "errors": {"q0": PICK_ONE}}
    filled = fake_slack.submit_payload(view, user=ALICE, fill={OTHER_LABEL: "canary"})
    await fake_slack.push(filled, envelope_type="interactive")
    await handled(socket_gw)
    assert await answers(socket_gw, prompt) == [["canary"]]


# Slack's 3 s acknowledgement -----------------------------------------------------------------------------


class SlowSink:
    """Our own inbound sink that takes ``delay`` seconds to look a prompt up, as a stalled store would, or
    until ``release`` is set when the test holds it."""

    def __init__(self, prompt: Prompt, delay: float) -> None:
        self.prompt = prompt
        self.delay = delay
        self.release: asyncio.Event | None = None
        self.received: list[InboundMessage] = []

    async def get_prompt(self, prompt_id: str) -> Prompt:
        if self.release is not None:
            await self.release.wait()
        else:
            await asyncio.sleep(self.delay)
        if prompt_id != self.prompt.prompt_id:
            raise not_found("PROMPT_NOT_FOUND", "prompt", prompt_id)
        return self.prompt

    async def receive(self, message: InboundMessage) -> Received:
        self.received.append(message)
        return Received(Outcome.ANSWERED, self.prompt)

    async def step(self, request: StepRequest) -> StepResult:
        return await answer_step.step(self, request)

    async def save_draft(self, prompt_id: str, sender: str, name: str, values: dict[str, str]) -> Draft:
        raise AssertionError("no press of these tests keeps a draft")

    async def get_draft(self, thread_id: str, name: str) -> dict[str, str]:
        return {}

    async def read_thread(
        self, thread_id: str, after: str | None = None, limit: int = 100, wait: float = 0
    ) -> list[tuple[str, dict[str, Any]]]:
        return []


def standalone(fake: FakeSlack, request: PromptRequest, delay: float) -> tuple[SlackChannel, SlowSink]:
    thread_id = f"slack:{CHANNEL}:1712345678.000100"
    now = utcnow()
    prompt = Prompt(
        prompt_id=new_id("prm"),
        run_id=new_id("run"),
        thread_id=thread_id,
        agent="ops",
        kind=request.kind,
        questions=request.questions,
        tool_call=request.tool_call,
        created_at=now,
        expires_at=now + timedelta(days=1),
    )
    channel = SlackChannel(fake.bot_token, signing_secret=fake.signing_secret, api_url=fake.api_url)
    return channel, SlowSink(prompt, delay)


async def test_press_is_acknowledged_before_it_is_handled(fake_slack: FakeSlack, serve: ServeApp) -> None:
    channel, sink = standalone(fake_slack, DROP, delay=0)
    sink.release = asyncio.Event()  # handling cannot finish until the test says so
    await channel.start(ChannelContext(sink=sink, lease=lambda name: Lease(None, name)))
    await channel.post(parse_thread_id(sink.prompt.thread_id), pending_prompt_item(sink.prompt))
    [message] = fake_slack.posted()
    async with serve(Starlette(routes=channel.routes())) as base_url:
        assert await fake_slack.press(f"{base_url}/slack/events", message, "Approve", user=ALICE) == 200
        assert sink.received == []
        sink.release.set()
        await channel.presses.idle()
    await channel.stop()

    [answer] = sink.received
    assert answer.answers == [
        {"question": "Allow db__drop to run?", "question_id": "q1", "answer": ["Approve"]}
    ]
    assert (answer.thread_id, answer.sender, answer.prompt_id) == (
        sink.prompt.thread_id,
        f"slack:{ALICE}",
        sink.prompt.prompt_id,
    )
    assert answer.notify is False
    assert answer.event_id is not None and answer.event_id.startswith("act:")
    assert fake_slack.private_notices() == ["Your answer was recorded: Approve"]


async def test_form_that_cannot_be_checked_in_time_asks_to_submit_again(
    fake_slack: FakeSlack, serve: ServeApp
) -> None:
    channel, sink = standalone(fake_slack, NOTE, delay=0.5)
    channel.presses.ack_budget = 0.1
    await channel.start(ChannelContext(sink=sink, lease=lambda name: Lease(None, name)))
    await channel.post(parse_thread_id(sink.prompt.thread_id), pending_prompt_item(sink.prompt))
    [message] = fake_slack.posted()
    async with serve(Starlette(routes=channel.routes())) as base_url:
        url = f"{base_url}/slack/events"
        assert await fake_slack.press(url, message, "Answer…", user=ALICE) == 200
        await channel.presses.idle()
        [view] = fake_slack.opened_views()
        fill: dict[str, list[str] | str] = {"What should the release note say?": "Faster."}
        answer = await fake_slack.submit(url, view, user=ALICE, fill=fill)
        await channel.presses.idle()
    await channel.stop()
    assert answer == {"response_action": "errors", "errors": {"t0": BUSY_ERROR}}
    assert sink.received == []


async def test_prompt_over_two_messages_has_its_controls_and_its_outcome_on_the_last(
    gw: SlackGateway,
) -> None:
    questions = [
        Question(
            question=f"{number}" + "&" * 1998 + "?",
            options=[Option(label=f"o{index}", description="&" * 290) for index in range(3)],
        )
        for number in range(4)
    ]
    prompt, first, last = await ask_long(
        gw, PromptRequest(kind=PromptKind.ASK_USER_QUESTION, questions=questions)
    )
    assert controls(first) == [] and controls(last) != []

    view = await open_form(gw, last, "Answer…", user=ALICE)
    fill: dict[str, list[str] | str] = {question.question: ["o1"] for question in questions}
    await gw.fake.submit(gw.events_url, view, user=ALICE, fill=fill)
    await handled(gw)
    assert await answers(gw, prompt) == [["o1"]] * 4
    assert gw.fake.message(first)["blocks"] == first["blocks"]
    assert controls(gw.fake.message(last)) == []
    assert section_texts(gw.fake.message(last))[-1] == "✓ Answered: o1 · o1 · o1 · o1"


async def ask_long(gw: SlackGateway, request: PromptRequest) -> tuple[Prompt, dict[str, Any], dict[str, Any]]:
    thread_ts = await gw.open_thread()
    prompt = await gw.ask(f"slack:{CHANNEL}:{thread_ts}", request)
    first, last = gw.fake.posted(thread_ts)
    return prompt, first, last
