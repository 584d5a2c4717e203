"""A Slack request that cannot be read or handled is logged once with its id and acknowledged, over the
Events API and Socket Mode, so Slack does not deliver it again and again; the next reply answers."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from gateway.base.models import PromptState
from tests.channels.slack_support import ALICE, CHANNEL, TARGET, SlackGateway, slack_gateway
from tests.fakes.slack import FakeSlack, message_event

BadBody = Callable[[SlackGateway, str], dict[str, Any]]


def event_that_is_a_string(gw: SlackGateway, thread_ts: str) -> dict[str, Any]:
    return {**gw.fake.callback({}), "event": "2"}


def event_that_is_a_list(gw: SlackGateway, thread_ts: str) -> dict[str, Any]:
    return {**gw.fake.callback({}), "event": [gw.reply(thread_ts, "2")]}


def event_type_that_is_a_number(gw: SlackGateway, thread_ts: str) -> dict[str, Any]:
    return gw.fake.callback({**gw.reply(thread_ts, "2"), "type": 7})


def text_that_is_a_number(gw: SlackGateway, thread_ts: str) -> dict[str, Any]:
    return gw.fake.callback({**gw.reply(thread_ts, "2"), "text": 2})


def thread_ts_that_is_an_object(gw: SlackGateway, thread_ts: str) -> dict[str, Any]:
    return gw.fake.callback({**gw.reply(thread_ts, "2"), "thread_ts": {"ts": thread_ts}})


def subtype_that_is_an_object(gw: SlackGateway, thread_ts: str) -> dict[str, Any]:
    return gw.fake.callback({**gw.reply(thread_ts, "2"), "subtype": {"kind": "bot_message"}})


def callback_without_an_event(gw: SlackGateway, thread_ts: str) -> dict[str, Any]:
    body = gw.fake.callback({})
    del body["event"]
    return body


EVENTS = [
    event_that_is_a_string,
    event_that_is_a_list,
    event_type_that_is_a_number,
    text_that_is_a_number,
    thread_ts_that_is_an_object,
    subtype_that_is_an_object,
    callback_without_an_event,
]


def press_with_actions(actions: object) -> Callable[[SlackGateway, dict[str, Any]], dict[str, Any]]:
    def build(gw: SlackGateway, posted: dict[str, Any]) -> dict[str, Any]:
        return {**gw.fake.press_payload(posted, "production", user=ALICE), "actions": actions}

    build.__name__ = f"actions_{type(actions).__name__}"
    return build


PRESSES = [press_with_actions("production"), press_with_actions([["production"]]), press_with_actions(7)]


def event_lines(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    """The ``slack.event.*`` lines: their event name and fields."""
    return [
        {"event": record.getMessage(), **vars(record)["fields"]}
        for record in caplog.records
        if record.getMessage().startswith("slack.event.")
    ]


@pytest.fixture(params=["events_api", "socket_mode"])
async def gw(request: pytest.FixtureRequest, fake_slack: FakeSlack) -> AsyncIterator[SlackGateway]:
    """The gateway on the embedded store (the store is not under test), taking Slack's requests over
    HTTP or over one Socket Mode connection."""
    socket_mode = request.param == "socket_mode"
    async with slack_gateway(fake_slack, None, http=not socket_mode, socket_mode=socket_mode) as gateway:
        if socket_mode:
            await fake_slack.wait_sockets(1)
        yield gateway


def over_socket(gw: SlackGateway) -> bool:
    return gw.channel.signing_secret is None


async def send_event(gw: SlackGateway, body: dict[str, Any]) -> bool:
    """Slack sends ``body``; whether it was acknowledged (HTTP 200, or an ack on the socket)."""
    if over_socket(gw):
        ack = await gw.fake.push(body, timeout=3)
        return "envelope_id" in ack
    return await gw.fake.deliver(gw.events_url, body) == 200


async def send_interaction(gw: SlackGateway, payload: dict[str, Any]) -> bool:
    if over_socket(gw):
        ack = await gw.fake.push(payload, timeout=3, envelope_type="interactive")
        return "envelope_id" in ack
    status, _ = await gw.fake.interact(gw.events_url, payload)
    return status == 200


async def asked(gw: SlackGateway) -> tuple[str, str]:
    """A person opens a thread and the agent asks there: the thread's ts and the prompt's id."""
    thread_ts = gw.fake.next_ts()
    mention = message_event(
        CHANNEL, ALICE, f"<@{gw.fake.bot_user_id}> deploy", ts=thread_ts, kind="app_mention"
    )
    assert await send_event(gw, gw.fake.callback(mention))
    prompt = await gw.ask(f"slack:{CHANNEL}:{thread_ts}", TARGET)
    return thread_ts, prompt.prompt_id


async def reply_answers(gw: SlackGateway, thread_ts: str, prompt_id: str) -> None:
    assert await send_event(gw, gw.fake.callback(gw.reply(thread_ts, "2")))
    settled = await gw.runtime.gateway.get_prompt(prompt_id)
    assert settled.prompt_state is PromptState.ANSWERED
    assert [a.answer for a in settled.answers or []] == [["production"]]


@pytest.mark.parametrize("bad_body", EVENTS)
async def test_an_event_that_cannot_be_read_is_logged_once_and_acknowledged(
    gw: SlackGateway, caplog: pytest.LogCaptureFixture, bad_body: BadBody
) -> None:
    caplog.set_level(logging.INFO, logger="threadgate")
    thread_ts, prompt_id = await asked(gw)
    body = bad_body(gw, thread_ts)
    connections = gw.fake.connections_opened
    caplog.clear()

    acknowledged = await send_event(gw, body)
    [line] = event_lines(caplog)
    await reply_answers(gw, thread_ts, prompt_id)

    assert acknowledged, "anything but an acknowledgement and Slack delivers it again"
    assert line["event_id"] == body["event_id"]
    assert set(line) <= {"event", "event_id", "payload_type", "error"}  # never the event's content
    assert gw.fake.connections_opened == connections  # a Socket Mode connection stayed up


@pytest.mark.parametrize("bad_payload", PRESSES)
async def test_an_interaction_that_cannot_be_read_is_logged_once_and_acknowledged(
    gw: SlackGateway,
    caplog: pytest.LogCaptureFixture,
    bad_payload: Callable[[SlackGateway, dict[str, Any]], dict[str, Any]],
) -> None:
    caplog.set_level(logging.INFO, logger="threadgate")
    thread_ts, prompt_id = await asked(gw)
    [posted] = gw.fake.posted(thread_ts)
    caplog.clear()

    acknowledged = await send_interaction(gw, bad_payload(gw, posted))
    [line] = event_lines(caplog)
    await reply_answers(gw, thread_ts, prompt_id)

    assert acknowledged
    assert (line["event"], line["payload_type"]) == ("slack.event.unreadable", "block_actions")
