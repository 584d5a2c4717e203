"""The directory of people over real HTTP and a real Redis (contract §10): the routes and their codes,
link codes, and "who answered" meaning a person: quorum by person, person and group approvers, the
starter across their identities, asserted answers and agents that need sign-in."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from starlette.types import ASGIApp, Receive, Scope, Send

from gateway.api import create_app
from gateway.base.models import InboundMessage
from gateway.people.linking import new_link_code
from gateway.process.runtime import Runtime
from tests.api.conftest import (
    AGENT_AUTH,
    FAST,
    OPERATOR_AUTH,
    STARTER,
    THREAD,
    Served,
    ServedChannel,
    api_settings,
    raise_prompt,
    respond_path,
    serve,
    start_run,
)

SLACK_DANA, TEAMS_DANA = "slack:U0DANA", "teams:8f2c1d4e-1111-2222-3333-444455556666"
ERIN, MALLORY = "slack:U0ERIN", "slack:U0MALLORY"
CALL = {"name": "Bash", "arguments": {"command": "make deploy"}}


async def _person(operator: httpx.AsyncClient, person: str, **body: Any) -> httpx.Response:
    return await operator.put(f"/v1/people/{person}", json=body)


async def _approvers(operator: httpx.AsyncClient, *approvers: str, **human: Any) -> None:
    response = await operator.put(
        "/v1/agents/ops", json={"human_input": {"approvers": list(approvers), **human}}
    )
    assert response.status_code == 200, response.text


async def _input(operator: httpx.AsyncClient, prompt_id: str, who: str, **body: Any) -> httpx.Response:
    return await operator.post(
        f"/v1/agents/ops/inputs/{prompt_id}", json={"action": "accept", "from": who, **body}
    )


# The two routes a person's answer takes over HTTP: an operator's inputs route with ``from``, and the
# respond route with ``X-Threadgate-From``; who may answer is one rule for both.
ROUTES = ("inputs", "respond")
APPROVE = [{"questionId": "q1", "selected": ["Approve"]}]


async def _answer(
    route: str, operator: httpx.AsyncClient, prompt: dict[str, Any], who: str
) -> httpx.Response:
    """``who`` approves ``prompt`` over ``route``."""
    if route == "inputs":
        return await _input(operator, prompt["prompt_id"], who)
    run = {"run_id": prompt["run_id"], "thread_id": prompt["thread_id"]}
    return await operator.post(
        respond_path(run, prompt["prompt_id"]), json={"answers": APPROVE}, headers={"X-Threadgate-From": who}
    )


async def _approval(agent: httpx.AsyncClient, **extra: Any) -> dict[str, Any]:
    run = await start_run(agent)
    return await raise_prompt(agent, run["run_id"], tool_call=CALL, **extra)


# The directory ----------------------------------------------------------------------------------------


async def test_a_person_round_trips_and_is_listed(operator: httpx.AsyncClient) -> None:
    put = await _person(
        operator,
        "dana",
        name="Dana",
        email="dana@example.com",
        identities=[TEAMS_DANA, SLACK_DANA],
        groups=["sre"],
    )
    assert put.status_code == 200, put.text
    expected = {
        "person": "dana",
        "name": "Dana",
        "email": "dana@example.com",
        "identities": sorted([SLACK_DANA, TEAMS_DANA]),
        "groups": ["sre"],
    }
    assert put.json() == expected
    assert (await operator.get("/v1/people/dana")).json() == expected
    assert (await operator.get("/v1/people/person:dana")).json() == expected
    listed = (await operator.get("/v1/people")).json()
    assert listed == {"items": [expected], "cursor": None}


async def test_an_identity_of_another_person_is_409_identity_taken(operator: httpx.AsyncClient) -> None:
    await _person(operator, "dana", identities=[SLACK_DANA])
    taken = await _person(operator, "erin", identities=[ERIN, SLACK_DANA])
    assert taken.status_code == 409
    error = taken.json()["error"]
    assert error["code"] == "IDENTITY_TAKEN"
    assert error["details"] == {"identity": SLACK_DANA, "person": "dana"}
    assert (await operator.get("/v1/people/erin")).status_code == 404, "nothing of a refused put is kept"


async def test_replacing_a_person_frees_the_identities_it_drops(operator: httpx.AsyncClient) -> None:
    await _person(operator, "dana", identities=[SLACK_DANA, TEAMS_DANA])
    await _person(operator, "dana", identities=[TEAMS_DANA])
    moved = await _person(operator, "erin", identities=[SLACK_DANA])
    assert moved.status_code == 200, moved.text


async def test_two_concurrent_claims_of_one_identity_cannot_both_win(served: Served) -> None:
    people = served.runtime.gateway.store.people
    from gateway.base.models import Person

    results = await asyncio.gather(
        *(people.put(Person(person=f"p{index}", identities=[ERIN])) for index in range(8))
    )
    assert sum(1 for _, taken in results if taken is None) == 1


async def test_delete_removes_the_person_and_frees_their_identities(operator: httpx.AsyncClient) -> None:
    await _person(operator, "dana", identities=[SLACK_DANA])
    gone = await operator.delete("/v1/people/person:dana")
    assert (gone.status_code, gone.json()["person"]) == (200, "dana")
    assert (await operator.get("/v1/people/dana")).json()["error"]["code"] == "PERSON_NOT_FOUND"
    assert (await operator.delete("/v1/people/dana")).status_code == 404
    assert (await _person(operator, "erin", identities=[SLACK_DANA])).status_code == 200


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("Dana", {}),
        ("person:" + "x" * 65, {}),
        ("dana", {"identities": ["bogus:1"]}),
        ("dana", {"groups": ["no spaces"]}),
        ("dana", {"person": "erin"}),
    ],
)
async def test_bad_people_are_refused_with_the_envelope(
    operator: httpx.AsyncClient, path: str, body: dict[str, Any]
) -> None:
    response = await operator.put(f"/v1/people/{path}", json=body)
    assert response.status_code in (400, 422)
    assert response.json()["error"]["code"] in ("INVALID_PARAMS", "VALIDATION_FAILED")


async def test_the_directory_is_for_operator_tokens_only(served: Served) -> None:
    async with served.client(AGENT_AUTH) as agent, served.client() as nobody:
        for method, path in (
            ("GET", "/v1/people"),
            ("GET", "/v1/people/dana"),
            ("PUT", "/v1/people/dana"),
            ("DELETE", "/v1/people/dana"),
        ):
            refused = await agent.request(method, path, json={} if method == "PUT" else None)
            assert (refused.status_code, refused.json()["error"]["code"]) == (403, "FORBIDDEN")
            anonymous = await nobody.request(method, path, json={} if method == "PUT" else None)
            assert anonymous.status_code == 401


async def test_the_routes_are_in_the_openapi_document(operator: httpx.AsyncClient) -> None:
    paths = (await operator.get("/openapi.json")).json()["paths"]
    assert {"get", "put", "delete"} <= set(paths["/v1/people/{person}"])
    assert "get" in paths["/v1/people"] and "post" in paths["/v1/me/links"]


# Link codes -------------------------------------------------------------------------------------------


async def test_a_link_code_typed_in_chat_links_that_identity_once(
    served: Served, operator: httpx.AsyncClient
) -> None:
    await _person(operator, "dana", identities=[SLACK_DANA])
    gateway = served.runtime.gateway
    code = await new_link_code(gateway.store.people, "dana")
    typed = await gateway.receive(
        InboundMessage(thread_id=THREAD, sender=TEAMS_DANA, text=f"link {code.lower()}", direct=True)
    )
    assert typed.notice is not None and typed.notice.startswith("Linked")
    assert TEAMS_DANA in (await operator.get("/v1/people/dana")).json()["identities"]
    again = await gateway.receive(
        InboundMessage(thread_id=THREAD, sender=MALLORY, text=f"link {code}", direct=True)
    )
    assert again.notice is not None and "already used" in again.notice
    assert (await operator.get("/v1/people/dana")).json()["identities"] == sorted([SLACK_DANA, TEAMS_DANA])
    queued = (await operator.get("/v1/messages", params={"thread_id": THREAD})).json()["items"]
    assert not any("link" in item["text"] for item in queued), "a link code never reaches an agent"


async def test_an_unknown_code_or_a_taken_identity_is_refused_plainly(
    served: Served, operator: httpx.AsyncClient
) -> None:
    await _person(operator, "dana", identities=[SLACK_DANA])
    await _person(operator, "erin", identities=[ERIN])
    gateway = served.runtime.gateway
    unknown = await gateway.receive(
        InboundMessage(thread_id=THREAD, sender=ERIN, text="link ABCD-EFGH", direct=True)
    )
    assert unknown.notice is not None and "not valid" in unknown.notice
    code = await new_link_code(gateway.store.people, "dana")
    taken = await gateway.receive(
        InboundMessage(thread_id=THREAD, sender=ERIN, text=f"link {code}", direct=True)
    )
    assert taken.notice is not None and "belongs to someone else" in taken.notice
    assert (await operator.get("/v1/people/erin")).json()["identities"] == [ERIN]


async def test_a_code_typed_where_others_read_it_links_nothing_and_is_spent(
    served: Served, operator: httpx.AsyncClient
) -> None:
    await _person(operator, "dana", identities=[SLACK_DANA])
    gateway = served.runtime.gateway
    code = await new_link_code(gateway.store.people, "dana")
    shared = await gateway.receive(InboundMessage(thread_id=THREAD, sender=TEAMS_DANA, text=f"link {code}"))
    assert shared.notice is not None and shared.notice.startswith("Send link codes to me in a direct message")
    redelivered = await gateway.receive(
        InboundMessage(thread_id=THREAD, sender=TEAMS_DANA, text=f"link {code}")
    )
    assert redelivered.notice == shared.notice, "the same message again is told the same"
    for who in (MALLORY, TEAMS_DANA):  # whoever read it, and the person in a direct message after all
        late = await gateway.receive(
            InboundMessage(thread_id=THREAD, sender=who, text=f"link {code}", direct=True)
        )
        assert late.notice is not None and "already used" in late.notice
    assert (await operator.get("/v1/people/dana")).json()["identities"] == [SLACK_DANA]


async def test_link_codes_are_rate_limited_per_person(served: Served, operator: httpx.AsyncClient) -> None:
    await _person(operator, "dana")
    people = served.runtime.gateway.store.people
    from gateway.base.errors import GatewayError
    from gateway.people.linking import CODES_PER_WINDOW

    for _ in range(CODES_PER_WINDOW):
        await new_link_code(people, "dana")
    with pytest.raises(GatewayError) as refused:
        await new_link_code(people, "dana")
    assert (refused.value.status, refused.value.code) == (429, "RATE_LIMITED")


class _SignedIn:
    """A stand-in for the sign-in layer: sets ``request.state.person`` from a test header."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            for name, value in scope["headers"]:
                if name == b"x-test-person":
                    scope.setdefault("state", {})["person"] = value.decode()
        await self.app(scope, receive, send)


async def test_me_links_needs_a_signed_in_person(real_redis: str) -> None:
    settings = api_settings(real_redis)
    runtime = Runtime.build(settings, channels=[ServedChannel("slack")])
    app = create_app(runtime, FAST)
    app.add_middleware(_SignedIn)
    async with (
        serve(app, settings) as base_url,
        httpx.AsyncClient(base_url=base_url, headers=OPERATOR_AUTH, timeout=10) as operator,
    ):
        await _person(operator, "dana")
        anonymous = await operator.post("/v1/me/links", json={})
        assert (anonymous.status_code, anonymous.json()["error"]["code"]) == (401, "UNAUTHORIZED")
        made = await operator.post("/v1/me/links", json={}, headers={"X-Test-Person": "dana"})
        assert made.status_code == 201, made.text
        body = made.json()
        assert (body["person"], body["expires_in_seconds"]) == ("dana", 600)
        typed = await runtime.gateway.receive(
            InboundMessage(thread_id=THREAD, sender=ERIN, text=f"link {body['code']}", direct=True)
        )
        assert typed.notice is not None and typed.notice.startswith("Linked")
        assert ERIN in (await operator.get("/v1/people/dana")).json()["identities"]
        nobody = await operator.post("/v1/me/links", json={}, headers={"X-Test-Person": "ghost"})
        assert (nobody.status_code, nobody.json()["error"]["code"]) == (404, "PERSON_NOT_FOUND")


# Who may answer, by person -----------------------------------------------------------------------------


# Each approver list names dana three ways: both identities, her person, her directory group.
LISTED = {
    "identities": (SLACK_DANA, TEAMS_DANA),
    "person": ("person:dana",),
    "group": ("group:sre",),
}


@pytest.mark.parametrize("listed", sorted(LISTED))
@pytest.mark.parametrize("route", ROUTES)
async def test_two_identities_of_one_person_are_one_vote(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient, route: str, listed: str
) -> None:
    await _person(operator, "dana", identities=[SLACK_DANA, TEAMS_DANA], groups=["sre"])
    await _approvers(operator, *LISTED[listed], ERIN)
    prompt = await _approval(agent, approvals=2)
    first = await _answer(route, operator, prompt, SLACK_DANA)
    assert first.status_code == 200, first.text
    seen = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert seen["prompt_state"] == "pending"
    assert seen["votes"][0]["person"] == "dana"
    second = await _answer(route, operator, prompt, TEAMS_DANA)
    assert (second.status_code, second.json()["error"]["code"]) == (409, "ALREADY_VOTED")
    erin = await _answer(route, operator, prompt, ERIN)
    assert erin.status_code == 200, erin.text
    body = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert body["prompt_state"] == "answered"
    assert [(vote["by"], vote["person"]) for vote in body["votes"]] == [(SLACK_DANA, "dana"), (ERIN, None)]


async def test_in_chat_a_second_identity_of_the_same_person_is_told_already_voted(
    served: Served, agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    await _person(operator, "dana", identities=[SLACK_DANA, TEAMS_DANA])
    await _approvers(operator, "person:dana", ERIN)
    prompt = await _approval(agent, approvals=2)
    gateway = served.runtime.gateway
    first = await gateway.receive(InboundMessage(thread_id=THREAD, sender=SLACK_DANA, text="approve"))
    again = await gateway.receive(InboundMessage(thread_id=THREAD, sender=TEAMS_DANA, text="approve"))
    assert (first.outcome.value, again.outcome.value) == ("voted", "already_voted")
    told = [text for _, who, text in served.channel.notices if who == TEAMS_DANA]
    assert told[-1].startswith(f"You already voted as {SLACK_DANA}")
    seen = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert seen["prompt_state"] == "pending"


@pytest.mark.parametrize("dana_answers_as", [SLACK_DANA, TEAMS_DANA])
@pytest.mark.parametrize("listed", ["person", "group"])
@pytest.mark.parametrize("route", ROUTES)
async def test_a_person_or_group_approver_admits_their_identities_and_nobody_else(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient, route: str, listed: str, dana_answers_as: str
) -> None:
    await _person(operator, "dana", identities=[SLACK_DANA, TEAMS_DANA], groups=["sre"])
    await _person(operator, "erin", identities=[ERIN], groups=["sales"])
    await _approvers(operator, *LISTED[listed])
    prompt = await _approval(agent)
    erin = await _answer(route, operator, prompt, ERIN)
    assert erin.status_code == 403, "a person of another group, not listed, is not an approver"
    mallory = await _answer(route, operator, prompt, MALLORY)
    assert (mallory.status_code, mallory.json()["error"]["code"]) == (403, "FORBIDDEN")
    dana = await _answer(route, operator, prompt, dana_answers_as)
    assert dana.status_code == 200, dana.text
    seen = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert (seen["prompt_state"], seen["answered_by"], seen["person"]) == (
        "answered",
        dana_answers_as,
        "dana",
    )


async def test_unlinking_an_identity_takes_its_rights_away(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient, served: Served
) -> None:
    await _person(operator, "dana", identities=[SLACK_DANA, TEAMS_DANA])
    await _approvers(operator, "person:dana")
    await _person(operator, "dana", identities=[SLACK_DANA])
    prompt = await _approval(agent)
    refused = await _input(operator, prompt["prompt_id"], TEAMS_DANA)
    assert refused.status_code == 403


@pytest.mark.parametrize("route", ROUTES)
async def test_the_starter_answers_from_any_identity_and_never_counts_across_them(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient, route: str
) -> None:
    teams_starter = "teams:0a0b0c0d-1111-2222-3333-444455556666"
    await _person(operator, "sam", identities=[STARTER, teams_starter])
    await operator.put(
        "/v1/agents/ops",
        json={
            "human_input": {"approvers": [ERIN]},
            "approval": {"tools": {"Bash": {"ask": "always", "approvals": 2, "starter_counts": False}}},
        },
    )
    run = await start_run(agent)
    prompt = (await agent.post(f"/v1/runs/{run['run_id']}/approvals", json={"tool_call": CALL})).json()
    starter = await _answer(route, operator, prompt, teams_starter)
    assert starter.status_code == 200, "the starter may answer from their other identity"
    vote = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()["votes"][0]
    assert (vote["person"], vote["counted"]) == ("sam", False)
    erin = await _answer(route, operator, prompt, ERIN)
    assert erin.status_code == 200, erin.text
    seen = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert seen["prompt_state"] == "pending", "the starter's other identity did not count"


# Asserted answers and sign-in --------------------------------------------------------------------------


async def test_an_operator_answer_with_from_is_recorded_as_asserted(
    served: Served, agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    carol = "web:carol"
    await _approvers(operator, carol)
    prompt = await _approval(agent)
    answered = (await _input(operator, prompt["prompt_id"], carol)).json()
    assert (answered["answered_by"], answered["asserted_by"]) == (carol, "desk")
    stored = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()
    assert stored["asserted_by"] == "desk"
    gateway = served.runtime.gateway
    await gateway.outbox.flush(THREAD)
    from gateway.rules import notices

    audit = [post.item for post in served.channel.posts if post.item.type == "pending_prompt_resolved"]
    assert notices.answered_by(audit[-1]) == "Approved by web:carol, asserted by desk"
    await asyncio.sleep(0.2)
    history = (await operator.get("/v1/history", params={"run": prompt["run_id"]})).json()["items"]
    assert history[0]["asserted_by"] == "desk" and history[0]["by"] == carol


async def test_an_agent_that_requires_sign_in_refuses_asserted_and_web_chat_answers(
    served: Served, agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    await _approvers(operator, ERIN, "web:carol", require_sign_in=True)
    prompt = await _approval(agent)
    asserted = await _input(operator, prompt["prompt_id"], ERIN)
    assert (asserted.status_code, asserted.json()["error"]["code"]) == (403, "SIGN_IN_REQUIRED")
    run = {"run_id": prompt["run_id"], "thread_id": THREAD}
    responded = await operator.post(
        respond_path(run, prompt["prompt_id"]),
        json={"answers": [{"questionId": "q1", "selected": ["Approve"]}]},
        headers={"X-Threadgate-From": ERIN},
    )
    assert (responded.status_code, responded.json()["error"]["code"]) == (403, "SIGN_IN_REQUIRED")
    gateway = served.runtime.gateway
    web = await gateway.receive(InboundMessage(thread_id=THREAD, sender="web:carol", text="approve"))
    assert web.outcome.value == "not_allowed", "a web-chat name is nobody's sign-in"
    slack = await gateway.receive(InboundMessage(thread_id=THREAD, sender=ERIN, text="approve"))
    assert slack.outcome.value == "answered", "a platform identity is signed in by its platform"


# History by person -------------------------------------------------------------------------------------


async def test_history_records_name_the_person_and_filter_by_them(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient
) -> None:
    await _person(operator, "dana", identities=[SLACK_DANA, TEAMS_DANA])
    await _approvers(operator, "person:dana", ERIN)
    first = await _approval(agent)
    await _input(operator, first["prompt_id"], TEAMS_DANA)
    second = await _approval(agent)
    await _input(operator, second["prompt_id"], ERIN)
    for _ in range(50):
        items = (await operator.get("/v1/history")).json()["items"]
        if len(items) == 2:
            break
        await asyncio.sleep(0.05)
    mine = (await operator.get("/v1/history", params={"person": "person:dana"})).json()["items"]
    assert [(item["prompt_id"], item["by"], item["person"]) for item in mine] == [
        (first["prompt_id"], TEAMS_DANA, "dana")
    ]
    bad = await operator.get("/v1/history", params={"person": "Not Valid"})
    assert (bad.status_code, bad.json()["error"]["code"]) == (400, "VALIDATION_FAILED")
