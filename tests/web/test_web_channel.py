"""The web channel over HTTP: sign-in, the live item log, replies and control answers, private notices."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from gateway.rules import notices
from tests.support.new_kinds import FORM, FORM_TEXT, URL, URL_TEXT
from tests.web.conftest import AGENT_AUTH, OPERATOR_AUTH, WebGateway, raise_prompt, start_run, web_gateway

DEPLOY = {
    "kind": "ask_user_question",
    "questions": [
        {
            "question": "What's the deployment target?",
            "options": [{"label": "staging"}, {"label": "production"}],
        },
        {
            "question": "Which sections?",
            "multiSelect": True,
            "options": [{"label": "KPI"}, {"label": "Table"}],
        },
    ],
}


@pytest.fixture
async def web() -> AsyncIterator[WebGateway]:
    async with web_gateway() as gateway:
        yield gateway


async def read_items(
    client: httpx.AsyncClient,
    room: str,
    count: int,
    headers: dict[str, str] | None = None,
    name: str = "alice",
) -> list[dict[str, Any]]:
    """The first ``count`` items of the room's event stream, read as ``name`` (the runs' starter here)."""
    items: list[dict[str, Any]] = []
    async with asyncio.timeout(5):
        stream = client.stream("GET", f"/chat/{room}/events", headers=headers or {}, params={"name": name})
        async with stream as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            async for line in response.aiter_lines():
                if line.startswith("data: "):
                    items.append(json.loads(line[6:]))
                    if len(items) == count:
                        return items
    return items


async def say(client: httpx.AsyncClient, room: str, **body: Any) -> httpx.Response:
    return await client.post(f"/chat/{room}/messages", json=body)


async def test_chat_page_is_served_for_a_room_and_refused_for_a_malformed_one(web: WebGateway) -> None:
    async with web.client() as client:
        page = await client.get("/chat/ops-room")
        bad = await client.get("/chat/no%20spaces")
    assert page.status_code == 200
    assert 'data-room="ops-room"' in page.text and 'data-sign-in="name"' in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "INVALID_THREAD_ID"


async def follow_items(client: httpx.AsyncClient, room: str, into: asyncio.Queue[dict[str, Any]]) -> None:
    """Put each item of the room's event stream into ``into`` as it arrives, until cancelled."""
    async with client.stream("GET", f"/chat/{room}/events") as response:
        assert response.status_code == 200
        async for line in response.aiter_lines():
            if line.startswith("data: "):
                await into.put(json.loads(line[6:]))


async def test_event_stream_replays_the_log_then_follows_it_live(web: WebGateway) -> None:
    async with web.client() as client, web.client(AGENT_AUTH) as agent:
        assert (await say(client, "live", name="alice", text="first")).json() == {"outcome": "queued"}
        arrived: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        reader = asyncio.create_task(follow_items(client, "live", arrived))
        try:
            first = await asyncio.wait_for(arrived.get(), 5)  # replayed: the reader is connected
            assert arrived.empty()
            # Written only now, so it can only reach the reader by the stream following the log live.
            await agent.post(
                "/v1/threads/web:live/items", json={"content": [{"type": "text", "text": "second"}]}
            )
            second = await asyncio.wait_for(arrived.get(), 5)
        finally:
            reader.cancel()
        resumed = await read_items(client, "live", 1, {"Last-Event-ID": first["id"]})
    assert (first["role"], first["sender"], first["text"]) == ("person", "web:alice", "first")
    assert (second["role"], second["content"][0]["text"]) == ("agent", "second")
    assert resumed[0]["id"] == second["id"]


async def test_a_chat_stream_is_not_opened_while_the_store_is_away(web: WebGateway) -> None:
    health = web.runtime.health
    health.down_since = health.clock()  # as after a round trip that found Redis away
    try:
        async with web.client() as client:
            refused = await client.get("/chat/hall/events", params={"name": "alice"})
    finally:
        health.down_since = None
    assert refused.status_code == 503
    assert refused.json()["error"]["code"] == "STORE_UNAVAILABLE"
    assert refused.headers["Retry-After"]


async def test_typed_reply_is_mapped_against_each_question_of_the_pending_prompt(web: WebGateway) -> None:
    async with web.client() as client, web.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "typed")
        prompt = await raise_prompt(agent, run["run_id"], **DEPLOY)
        reply = await say(client, "typed", name="alice", text="2")
        settled = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert reply.json() == {"outcome": "answered"}
    assert [answer["answer"] for answer in settled["answers"]] == [["production"], ["Table"]]


async def test_control_answers_resolve_with_each_question_answered_as_sent(web: WebGateway) -> None:
    async with web.client() as client, web.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "controls")
        prompt = await raise_prompt(agent, run["run_id"], **DEPLOY)
        answers = [
            {"question_id": "q1", "answer": ["staging"]},
            {"question_id": "q2", "answer": ["KPI", "Table"]},
        ]
        reply = await say(
            client,
            "controls",
            name="alice",
            text="staging · KPI, Table",
            answers=answers,
            prompt_id=prompt["prompt_id"],
        )
        settled = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
        items = await read_items(client, "controls", 3)
    assert reply.json() == {"outcome": "answered"}
    assert [answer["answer"] for answer in settled["answers"]] == [["staging"], ["KPI", "Table"]]
    assert [item["type"] for item in items] == ["pending_prompt", "message", "pending_prompt_resolved"]
    assert items[2]["content"][0]["text"] == "✓ Answered: staging · KPI, Table"


async def test_reply_from_someone_not_allowed_is_not_an_answer_and_only_they_are_told(
    web: WebGateway,
) -> None:
    async with web.client() as client, web.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "guarded")
        prompt = await raise_prompt(agent, run["run_id"])
        reply = await say(client, "guarded", name="mallory", text="approve")
        still = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert reply.json() == {"outcome": "not_allowed", "notice": notices.NOT_ALLOWED}
    assert still["prompt_state"] == "pending"


async def test_control_press_for_a_settled_prompt_changes_nothing(web: WebGateway) -> None:
    async with web.client() as client, web.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "stale")
        old = await raise_prompt(agent, run["run_id"])
        await raise_prompt(agent, run["run_id"])  # supersedes the first
        answers = [{"question_id": "q1", "answer": ["Approve"]}]
        reply = await say(client, "stale", name="alice", answers=answers, prompt_id=old["prompt_id"])
    assert reply.json()["outcome"] == "stale"


async def test_same_client_message_delivered_twice_counts_once(web: WebGateway) -> None:
    async with web.client() as client:
        first = await say(client, "twice", name="alice", text="hi", client_id="c-1")
        again = await say(client, "twice", name="alice", text="hi", client_id="c-1")
    assert (first.json()["outcome"], again.json()["outcome"]) == ("queued", "duplicate")


async def test_open_sign_in_needs_a_valid_name(web: WebGateway) -> None:
    async with web.client() as client:
        nameless = await client.post("/chat/open/session", json={})
        bad = await client.post("/chat/open/session", json={"name": "alice smith"})
        good = await client.post("/chat/open/session", json={"name": "alice"})
    assert nameless.status_code == 401 and bad.status_code == 401
    assert good.json() == {"name": "alice", "identity": "web:alice"}


async def test_configured_token_names_who_posts_and_gates_reading() -> None:
    async with (
        web_gateway(tokens="alice:tok-alice,room-pass") as web,
        web.client() as client,
        web.client(AGENT_AUTH) as agent,
    ):
        page = await client.get("/chat/private")
        anonymous = await say(client, "private", name="alice", text="hi")
        unread = await client.get("/chat/private/events")
        bound = await client.post(
            "/chat/private/messages",
            json={"name": "mallory", "text": "hi"},  # the token says who this is, not the name
            headers={"Authorization": "Bearer tok-alice"},
        )
        shared = await client.post(
            "/chat/private/session", json={"name": "bob"}, headers={"Authorization": "Bearer room-pass"}
        )
        log = (await agent.get("/v1/threads/web:private/items")).json()["items"]
    assert 'data-sign-in="token"' in page.text
    assert anonymous.status_code == 401 and anonymous.json()["error"]["code"] == "UNAUTHORIZED"
    assert unread.status_code == 401
    assert bound.status_code == 202
    assert [item["sender"] for item in log] == ["web:alice"]
    assert shared.json()["identity"] == "web:bob"


def test_a_malformed_token_setting_is_refused_with_its_entry_number() -> None:
    from channels.web.access import parse_tokens

    with pytest.raises(ValueError, match="entry 2"):
        parse_tokens("alice:tok,bad name:tok")


def test_web_chat_on_refuses_to_start_without_a_token() -> None:
    from gateway.base.settings import Settings
    from tests.support.platforms import build_channel

    with pytest.raises(ValueError, match="THREADGATE_WEB_TOKEN"):
        build_channel("web", Settings(_env_file=None, threadgate_web_chat="true"))
    assert build_channel("web", Settings(_env_file=None, threadgate_web_chat="open")).access.open
    assert not build_channel(
        "web", Settings(_env_file=None, threadgate_web_chat="on", threadgate_web_token="alice:s3cret")
    ).access.open


async def test_a_name_bound_to_a_token_cannot_be_borrowed_with_the_room_token() -> None:
    room_token = {"Authorization": "Bearer roompw"}
    async with (
        web_gateway(tokens="alice:tok-a,roompw") as web,
        web.client(room_token) as mallory,
        web.client(AGENT_AUTH) as agent,
    ):
        run = await start_run(agent, "borrowed", started_by="web:alice")
        prompt = await raise_prompt(agent, run["run_id"])
        sessions = [
            await mallory.post("/chat/borrowed/session", json={"name": name}) for name in ("alice", "ALICE")
        ]
        typed = await say(mallory, "borrowed", name="alice", text="approve")
        pressed = await say(
            mallory,
            "borrowed",
            name="Alice",
            answers=[{"question_id": "q1", "answer": ["Approve"]}],
            prompt_id=prompt["prompt_id"],
        )
        unbound = await mallory.post("/chat/borrowed/session", json={"name": "bob"})
        still = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert [response.status_code for response in sessions] == [401, 401]
    assert "its own access token" in sessions[0].json()["error"]["message"]
    assert (typed.status_code, pressed.status_code) == (401, 401)
    assert still["prompt_state"] == "pending"
    assert unbound.json()["identity"] == "web:bob"


@pytest.mark.parametrize(("payload", "text"), [(FORM, FORM_TEXT), (URL, URL_TEXT)])
async def test_a_form_or_url_step_is_posted_as_its_text(
    web: WebGateway, payload: dict[str, Any], text: str
) -> None:
    async with web.client() as client, web.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "newkinds")
        await raise_prompt(agent, run["run_id"], **payload, questions=None)
        [item] = await read_items(client, "newkinds", 1)
    assert item["content"][0]["text"] == text
    assert item["metadata"]["prompt"]["kind"] == payload["kind"]


async def test_a_typed_form_value_that_fails_validation_gets_a_notice_and_the_form_stays_open(
    web: WebGateway,
) -> None:
    async with web.client() as client, web.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "formchat")
        prompt = await raise_prompt(agent, run["run_id"], **FORM, questions=None)
        refused = await say(client, "formchat", name="alice", text="env: dev")
        taken = await say(client, "formchat", name="alice", text="env: prod\nreplicas: 3")
        settled = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert refused.json() == {
        "outcome": "kept",
        "notice": "Not taken: Environment must be one of: stg, prod (by number or name). "
        "The form is still open.",
    }
    assert taken.json() == {"outcome": "answered"}
    assert settled["content"] == {"env": "prod", "replicas": 3}


# Seed 002's forms (context.ask) and URL steps (requireUrl), answered from the page --------------------

SETUP_FORM: dict[str, Any] = {
    "kind": "form",
    "message": "Set up the new project.",
    "requested_schema": {
        "type": "object",
        "properties": {
            "contact": {"type": "string", "title": "Contact email", "format": "email"},
            "region": {
                "type": "string",
                "title": "Region",
                "oneOf": [
                    {"const": "eu-west", "title": "Europe, Ireland"},
                    {"const": "us-east", "title": "US"},
                ],
            },
            "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 5},
            "public": {"type": "boolean", "title": "Public"},
            "alerts": {"type": "array", "items": {"enum": ["email", "pager"]}, "maxItems": 1},
        },
        "required": ["contact", "region", "replicas"],
    },
    "questions": None,
}


def form_answers(contact: str, replicas: str) -> list[dict[str, Any]]:
    """What the page's Submit sends: one answer per property, a choice by its title, yes/no."""
    return [
        {"question_id": "contact", "answer": [contact]},
        {"question_id": "region", "answer": ["Europe, Ireland"]},
        {"question_id": "replicas", "answer": [replicas]},
        {"question_id": "public", "answer": ["yes"]},
        {"question_id": "alerts", "answer": []},
    ]


async def test_a_submitted_web_form_answers_with_the_typed_content_the_form_validator_took(
    web: WebGateway,
) -> None:
    async with web.client() as client, web.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "formok")
        prompt = await raise_prompt(agent, run["run_id"], **SETUP_FORM)
        reply = await say(
            client,
            "formok",
            name="alice",
            text="Contact email: ops@example.com",
            answers=form_answers("ops@example.com", "3"),
            prompt_id=prompt["prompt_id"],
        )
        settled = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert reply.json() == {"outcome": "answered"}
    assert settled["content"] == {
        "contact": "ops@example.com",
        "region": "eu-west",
        "replicas": 3,
        "public": True,
    }
    assert [answer["answer"] for answer in settled["answers"]] == [
        ["ops@example.com"],
        ["Europe, Ireland"],
        ["3"],
        ["Yes"],
        [],
    ]


async def test_a_web_form_value_that_fails_validation_is_named_by_its_constraint_and_the_form_stays_open(
    web: WebGateway,
) -> None:
    async with web.client() as client, web.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "formbad")
        prompt = await raise_prompt(agent, run["run_id"], **SETUP_FORM)
        refused = await say(
            client,
            "formbad",
            name="alice",
            answers=form_answers("ops@localhost", "9"),
            prompt_id=prompt["prompt_id"],
        )
        still = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert refused.status_code == 202
    assert refused.json() == {
        "outcome": "kept",
        "notice": "Not taken: Contact email must be an email address (format email); "
        "Replicas must be at most 5 (maximum 5). The form is still open.",
        "errors": [
            {"property": "contact", "problem": "must be an email address (format email)"},
            {"property": "replicas", "problem": "must be at most 5 (maximum 5)"},
        ],
    }
    assert still["prompt_state"] == "pending"


async def test_the_decline_button_on_a_web_form_cancels_it_as_declined(web: WebGateway) -> None:
    async with web.client() as client, web.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "formno")
        prompt = await raise_prompt(agent, run["run_id"], **SETUP_FORM)
        reply = await say(client, "formno", name="alice", decline=True, prompt_id=prompt["prompt_id"])
        settled = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert reply.json()["outcome"] == "declined"
    assert (settled["prompt_state"], settled["reason_code"]) == ("cancelled", "declined")


async def test_a_web_form_submitted_by_someone_who_may_not_answer_is_refused_and_stays_pending(
    web: WebGateway,
) -> None:
    async with web.client() as client, web.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "formstranger")
        prompt = await raise_prompt(agent, run["run_id"], **SETUP_FORM)
        submitted = await say(
            client,
            "formstranger",
            name="mallory",
            answers=form_answers("ops@example.com", "3"),
            prompt_id=prompt["prompt_id"],
        )
        declined = await say(
            client, "formstranger", name="mallory", decline=True, prompt_id=prompt["prompt_id"]
        )
        still = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert submitted.json() == declined.json() == {"outcome": "not_allowed", "notice": notices.NOT_ALLOWED}
    assert still["prompt_state"] == "pending"


@pytest.mark.parametrize(
    ("body", "outcome", "state"),
    [
        ({"answers": [{"question_id": "q1", "answer": ["done"]}]}, "answered", "answered"),
        ({"text": "Done"}, "answered", "answered"),  # typed, as in Slack
        ({"answers": [{"question_id": "q1", "answer": ["decline"]}]}, "declined", "cancelled"),
        ({"decline": True}, "declined", "cancelled"),  # the Decline button
    ],
)
async def test_a_url_step_completes_with_done_and_is_declined_with_decline(
    web: WebGateway, body: dict[str, Any], outcome: str, state: str
) -> None:
    async with web.client() as client, web.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "urlstep")
        prompt = await raise_prompt(agent, run["run_id"], **URL, questions=None)
        reply = await say(client, "urlstep", name="alice", prompt_id=prompt["prompt_id"], **body)
        settled = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert reply.json()["outcome"] == outcome
    assert settled["prompt_state"] == state
    if state == "answered":
        assert settled["answers"][0]["answer"] == ["done"]


async def test_a_url_step_pressed_by_someone_who_may_not_answer_stays_pending(web: WebGateway) -> None:
    async with web.client() as client, web.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "urlstranger")
        prompt = await raise_prompt(agent, run["run_id"], **URL, questions=None)
        answers = [{"question_id": "q1", "answer": ["done"]}]
        reply = await say(
            client, "urlstranger", name="mallory", answers=answers, prompt_id=prompt["prompt_id"]
        )
        still = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert reply.json()["outcome"] == "not_allowed"
    assert still["prompt_state"] == "pending"


# An approval's whole decision (contract §9): a reason, edited arguments, several approvers ----------------

CALL = {"name": "Bash", "arguments": {"command": "rm -rf build", "timeout": 30}}
SCHEMA = {
    "type": "object",
    "properties": {"command": {"type": "string", "maxLength": 40}, "timeout": {"type": "integer"}},
    "required": ["command"],
}
DENY = [{"question_id": "q1", "answer": ["Deny"]}]
APPROVE = [{"question_id": "q1", "answer": ["Approve"]}]


async def test_deny_with_a_reason_from_the_chat_reaches_the_agent_as_the_note(web: WebGateway) -> None:
    async with web.client() as client, web.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "reason")
        prompt = await raise_prompt(agent, run["run_id"], tool_call=CALL)
        reply = await say(
            client,
            "reason",
            name="alice",
            text="Deny",
            answers=DENY,
            note="use staging",
            prompt_id=prompt["prompt_id"],
        )
        seen = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
        items = await read_items(client, "reason", 3)
    assert reply.json() == {"outcome": "answered"}
    assert (seen["answers"][0]["answer"], seen["note"]) == (["Deny"], "use staging")
    assert items[2]["metadata"]["prompt"]["note"] == "use staging"


async def test_edited_arguments_from_the_chat_approve_the_edited_call_which_the_card_can_show(
    web: WebGateway,
) -> None:
    edited = {"command": "rm -rf build/tmp", "timeout": 5}
    async with web.client() as client, web.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "edits")
        prompt = await raise_prompt(agent, run["run_id"], tool_call=CALL, editable=True, input_schema=SCHEMA)
        reply = await say(
            client,
            "edits",
            name="alice",
            text="Approve",
            answers=APPROVE,
            arguments=edited,
            prompt_id=prompt["prompt_id"],
        )
        seen = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
        asked, _, settled = await read_items(client, "edits", 3)
    assert reply.json() == {"outcome": "answered"}
    assert (seen["tool_call"], seen["approved_call"]) == (CALL, {"name": "Bash", "arguments": edited})
    assert (asked["metadata"]["prompt"]["editable"], asked["metadata"]["prompt"]["input_schema"]) == (
        True,
        SCHEMA,
    )
    assert settled["metadata"]["prompt"]["approved_call"] == {"name": "Bash", "arguments": edited}
    assert asked["metadata"]["prompt"]["typing_hint"] == notices.approval_hint(editable=True)


async def test_edited_arguments_off_the_tools_schema_are_named_by_argument_and_the_approval_stays_open(
    web: WebGateway,
) -> None:
    async with web.client() as client, web.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "off-schema")
        prompt = await raise_prompt(agent, run["run_id"], tool_call=CALL, editable=True, input_schema=SCHEMA)
        arguments = {"command": "x" * 41, "timeout": 30}
        reply = await say(
            client,
            "off-schema",
            name="alice",
            answers=APPROVE,
            arguments=arguments,
            prompt_id=prompt["prompt_id"],
        )
        still = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    body = reply.json()
    assert body["outcome"] == "kept"
    assert body["notice"].startswith("Not taken: ") and body["notice"].endswith("The approval is still open.")
    assert [error["property"] for error in body["errors"]] == ["command"]
    assert still["prompt_state"] == "pending"


async def test_arguments_on_an_approval_not_raised_editable_change_nothing(web: WebGateway) -> None:
    async with web.client() as client, web.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "not-editable")
        prompt = await raise_prompt(agent, run["run_id"], tool_call=CALL)
        reply = await say(
            client,
            "not-editable",
            name="alice",
            answers=APPROVE,
            arguments={"command": "ls"},
            prompt_id=prompt["prompt_id"],
        )
        still = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert reply.json()["outcome"] == "kept" and "not raised as editable" in reply.json()["notice"]
    assert still["prompt_state"] == "pending"


@pytest.mark.parametrize(
    ("extra", "where"),
    [
        ({"note": "n" * 2001}, "note"),
        ({"arguments": ["not", "an", "object"]}, "arguments"),
        ({"note": 7}, "note"),
    ],
)
async def test_a_note_or_arguments_the_chat_cannot_take_are_400_naming_them(
    web: WebGateway, extra: dict[str, Any], where: str
) -> None:
    async with web.client() as client:
        reply = await say(client, "bad-decision", name="alice", answers=DENY, **extra)
    assert reply.status_code == 400
    assert reply.json()["error"]["code"] == "VALIDATION_FAILED" and reply.json()["error"][
        "message"
    ].startswith(where)


async def test_a_note_counts_toward_the_messages_size(web: WebGateway) -> None:
    async with web.client() as client:
        reply = await say(client, "big-note", name="alice", text="x" * 15_000, answers=DENY, note="n" * 1_500)
    assert reply.status_code == 413


async def test_two_approvers_in_the_chat_vote_once_each_and_the_votes_are_posted_beside_the_card(
    web: WebGateway,
) -> None:
    async with web.client() as client, web.client(AGENT_AUTH) as agent, web.client(OPERATOR_AUTH) as operator:
        approvers = {"human_input": {"approvers": ["web:alice", "web:bob"]}}
        assert (await operator.put("/v1/agents/ops", json=approvers)).status_code == 200
        run = await start_run(agent, "quorum")
        prompt = await raise_prompt(agent, run["run_id"], tool_call=CALL, approvals=2)
        press = {"answers": APPROVE, "prompt_id": prompt["prompt_id"]}
        first = await say(client, "quorum", name="alice", text="Approve", **press)
        again = await say(client, "quorum", name="alice", text="Approve", **press)
        last = await say(client, "quorum", name="bob", text="Approve", **press)
        items = await read_items(client, "quorum", 6)
    assert first.json() == {
        "outcome": "voted",
        "notice": "Your approval was recorded (Approved 1 of 2: web:alice); 1 more needed.",
    }
    assert again.json() == {"outcome": "already_voted", "notice": notices.ALREADY_VOTED}
    assert last.json() == {"outcome": "answered"}
    asked = items[0]["metadata"]["prompt"]
    votes = [item for item in items if item["metadata"].get("type") == "votes"]
    settled = items[-1]["metadata"]["prompt"]
    assert asked["approvals"] == 2
    assert [(item["content"][0]["text"], item["metadata"]["prompt_id"]) for item in votes] == [
        ("Approved 1 of 2: web:alice", prompt["prompt_id"])
    ]
    assert (settled["approvals"], [vote["by"] for vote in settled["votes"]]) == (2, ["web:alice", "web:bob"])
