"""What one web chat visitor may write: posts per name and per client, new rooms per client, message size,
and flags that are JSON booleans. A refused post stores nothing."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from channels.web import WebLimits
from channels.web.limits import MAX_MESSAGE_CHARS
from gateway.base.settings import Settings
from tests.support.new_kinds import FORM
from tests.support.platforms import build_channel
from tests.web.conftest import AGENT_AUTH, raise_prompt, start_run, web_gateway

ROOMY = WebLimits(posts_per_name=100, posts_per_client=100, new_rooms_per_client=100)


async def say(client: httpx.AsyncClient, room: str, **body: Any) -> httpx.Response:
    return await client.post(f"/chat/{room}/messages", json=body)


async def logged(agent: httpx.AsyncClient, room: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = (await agent.get(f"/v1/threads/web:{room}/items")).json()["items"]
    return items


def assert_rate_limited(response: httpx.Response) -> None:
    assert response.status_code == 429, response.text
    error = response.json()["error"]
    assert error["code"] == "RATE_LIMITED"
    assert int(response.headers["Retry-After"]) == error["details"]["retry_after"] >= 1


async def test_posts_beyond_the_name_limit_are_429_with_retry_after_and_store_nothing() -> None:
    limits = WebLimits(posts_per_name=3, posts_per_client=100)
    async with web_gateway(limits=limits) as web, web.client() as client, web.client(AGENT_AUTH) as agent:
        taken = [await say(client, "busy", name="alice", text=f"m{n}") for n in range(3)]
        refused = [await say(client, "busy", name="alice", text=f"over{n}") for n in range(2)]
        other = await say(client, "busy", name="bob", text="bob's turn")
        log = await logged(agent, "busy")
    assert [response.status_code for response in taken] == [202, 202, 202]
    for response in refused:
        assert_rate_limited(response)
    assert other.status_code == 202  # the name's limit, not the room's
    assert [item["text"] for item in log] == ["m0", "m1", "m2", "bob's turn"]


async def test_a_control_answer_counts_against_the_same_limit_and_leaves_the_prompt_pending() -> None:
    limits = WebLimits(posts_per_name=2, posts_per_client=100)
    async with web_gateway(limits=limits) as web, web.client() as client, web.client(AGENT_AUTH) as agent:
        for text in ("one", "two"):  # before the prompt, so neither answers it
            assert (await say(client, "pressed", name="alice", text=text)).status_code == 202
        run = await start_run(agent, "pressed")
        prompt = await raise_prompt(agent, run["run_id"])
        pressed = await say(
            client,
            "pressed",
            name="alice",
            answers=[{"question_id": "q1", "answer": ["Approve"]}],
            prompt_id=prompt["prompt_id"],
        )
        declined = await say(client, "pressed", name="alice", decline=True, prompt_id=prompt["prompt_id"])
        state = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()["prompt_state"]
    assert_rate_limited(pressed)
    assert_rate_limited(declined)
    assert state == "pending"


async def test_two_names_from_one_client_share_the_client_limit() -> None:
    limits = WebLimits(posts_per_name=10, posts_per_client=4)
    async with web_gateway(limits=limits) as web, web.client() as client, web.client(AGENT_AUTH) as agent:
        names = ("alice", "bob", "alice", "bob")
        taken = [await say(client, "shared", name=name, text=name) for name in names]
        refused = [await say(client, "shared", name=name, text="more") for name in ("carol", "alice")]
        log = await logged(agent, "shared")
    assert [response.status_code for response in taken] == [202] * 4
    for response in refused:
        assert_rate_limited(response)
    assert [item["text"] for item in log] == ["alice", "bob", "alice", "bob"]


async def test_rooms_brought_into_use_are_capped_per_client_and_used_rooms_stay_open() -> None:
    limits = WebLimits(new_rooms_per_client=2)
    async with web_gateway(limits=limits) as web, web.client() as client, web.client(AGENT_AUTH) as agent:
        await start_run(agent, "agents-room")  # in use already: a run, though nothing is logged yet
        first = [await say(client, room, name="alice", text="hi") for room in ("new-1", "new-2")]
        later = (("new-3", "alice"), ("new-4", "bob"))
        refused = [await say(client, room, name=name, text="hi") for room, name in later]
        again = await say(client, "new-1", name="alice", text="still here")
        run_room = await say(client, "agents-room", name="alice", text="hello")
        unused = await logged(agent, "new-3")
    assert [response.status_code for response in first] == [202, 202]
    for response in refused:
        assert_rate_limited(response)
        assert "new rooms" in response.json()["error"]["message"]
    assert (again.status_code, run_room.status_code) == (202, 202)
    assert unused == []


@pytest.mark.parametrize("letter", ["a", "é", "😀"])
async def test_a_message_at_the_cap_is_taken_and_one_character_more_is_413_and_stores_nothing(
    letter: str,
) -> None:
    async with (
        web_gateway(limits=ROOMY) as web,
        web.client({"Content-Type": "application/json"}) as client,
        web.client(AGENT_AUTH) as agent,
    ):

        async def post(text: str) -> httpx.Response:
            # ASCII-escaped JSON: the most bytes a message of this many characters can take.
            body = json.dumps({"name": "alice", "text": text}, ensure_ascii=True)
            return await client.post("/chat/sized/messages", content=body)

        over = await post(letter * (MAX_MESSAGE_CHARS + 1))
        far_over = await post(letter * 40_001)
        nothing = await logged(agent, "sized")
        at_cap = await post(letter * MAX_MESSAGE_CHARS)
        log = await logged(agent, "sized")
    for response in (over, far_over):
        assert response.status_code == 413, response.text[:200]
        assert response.json()["error"]["code"] == "TOO_LARGE"
    assert nothing == []
    assert at_cap.status_code == 202, at_cap.text[:200]
    assert [len(item["text"]) for item in log] == [MAX_MESSAGE_CHARS]


async def test_structured_answers_count_toward_the_size_cap() -> None:
    async with web_gateway(limits=ROOMY) as web, web.client() as client, web.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "formful")
        prompt = await raise_prompt(agent, run["run_id"], **FORM, questions=None)
        answers = [{"question_id": "q1", "answer": ["x" * MAX_MESSAGE_CHARS]}]
        response = await say(client, "formful", name="alice", answers=answers, prompt_id=prompt["prompt_id"])
        state = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()["prompt_state"]
        log = await logged(agent, "formful")
    assert (response.status_code, response.json()["error"]["code"]) == (413, "TOO_LARGE")
    assert state == "pending"
    assert [item.get("role") for item in log] == ["gateway"]  # the form itself, no answer


@pytest.mark.parametrize("decline", ["yes", "true", 1, "1", "no", 0, None, {}])
async def test_decline_takes_the_json_boolean_only_and_the_prompt_stays_pending(decline: Any) -> None:
    async with web_gateway(limits=ROOMY) as web, web.client() as client, web.client(AGENT_AUTH) as agent:
        run = await start_run(agent, "flags")
        prompt = await raise_prompt(agent, run["run_id"], **FORM, questions=None)
        response = await say(client, "flags", name="alice", decline=decline, prompt_id=prompt["prompt_id"])
        state = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()["prompt_state"]
        declined = await say(client, "flags", name="alice", decline=True, prompt_id=prompt["prompt_id"])
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "VALIDATION_FAILED"
    assert "decline" in response.json()["error"]["message"]
    assert state == "pending"
    assert declined.json()["outcome"] == "declined"


def test_web_limits_come_from_their_settings() -> None:
    settings = Settings(
        _env_file=None,
        threadgate_web_chat="open",
        threadgate_web_posts_per_name=5,
        threadgate_web_posts_per_client=7,
        threadgate_web_post_window_s=30,
        threadgate_web_new_rooms_per_client=3,
        threadgate_web_new_room_window_s=600,
    )
    assert build_channel("web", settings).limits == WebLimits(5, 7, 30, 3, 600)
    assert build_channel("web", Settings(_env_file=None, threadgate_web_chat="open")).limits == WebLimits()
