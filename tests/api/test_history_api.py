"""``GET /v1/history``: the audit of settled prompts over HTTP, scoped to the token's agents, paged by an
opaque cursor, and every bad parameter a 400 naming it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from gateway.base.cursors import history_cursor, history_positions, history_vector_cursor
from gateway.client import Client, Page, Threadgate
from gateway.store import keys
from tests.api.conftest import STARTER, Served, raise_prompt, served_gateway, start_run
from tests.support.conditions import eventually

TOKENS = "ops:agent:tok-ops,deploy:agent:tok-deploy,desk:operator:tok-desk,opsdesk:operator:tok-opsdesk:ops"
OPS_THREAD = "slack:C0456:1712345678.000100"
DEPLOY_THREAD = "slack:C0999:1712345678.000200"
WIDTH = len(keys.EVERY_PARTITION)
A_CURSOR = history_vector_cursor(("1712345678901-0",) * WIDTH)


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
async def scoped(real_redis: str) -> AsyncIterator[Served]:
    async with served_gateway(real_redis, threadgate_api_tokens=TOKENS) as gateway:
        yield gateway


@pytest.fixture
async def clients(scoped: Served) -> AsyncIterator[dict[str, httpx.AsyncClient]]:
    opened = {name: scoped.client(_auth(f"tok-{name}")) for name in ("ops", "deploy", "desk", "opsdesk")}
    try:
        yield opened
    finally:
        for client in opened.values():
            await client.aclose()


async def settle_approval(
    clients: dict[str, httpx.AsyncClient], agent: str, thread: str, approve: bool
) -> dict[str, Any]:
    """``agent`` asks for an approval; the operator answers it for the run's starter."""
    run = await start_run(clients[agent], thread_id=thread, name=agent)
    prompt = await raise_prompt(clients[agent], run["run_id"])
    body = {"action": "accept", "content": approve, "from": STARTER}
    response = await clients["desk"].post(f"/v1/agents/{agent}/inputs/{prompt['prompt_id']}", json=body)
    assert response.status_code == 200, response.text
    return prompt


async def history(client: httpx.AsyncClient, **params: Any) -> dict[str, Any]:
    response = await client.get("/v1/history", params=params)
    assert response.status_code == 200, response.text
    page: dict[str, Any] = response.json()
    return page


async def recorded(client: httpx.AsyncClient, count: int) -> list[dict[str, Any]]:
    """The history once it holds ``count`` records (the outbox writes them just after the answer)."""
    found: list[dict[str, Any]] = []

    async def enough() -> bool:
        found[:] = (await history(client))["items"]
        return len(found) >= count

    await eventually(enough, f"{count} records in the history")
    return found


async def test_a_settled_approval_is_listed_with_next_and_cursor(
    clients: dict[str, httpx.AsyncClient],
) -> None:
    prompt = await settle_approval(clients, "ops", OPS_THREAD, approve=True)
    [record] = await recorded(clients["desk"], 1)
    assert record["prompt_id"] == prompt["prompt_id"]
    assert (record["outcome"], record["by"], record["prompt_state"]) == ("approved", STARTER, "answered")
    page = await history(clients["desk"])
    assert page["next"] is None and page["cursor"] is None


async def test_a_token_sees_only_its_agents_records(clients: dict[str, httpx.AsyncClient]) -> None:
    ops = await settle_approval(clients, "ops", OPS_THREAD, approve=True)
    deploy = await settle_approval(clients, "deploy", DEPLOY_THREAD, approve=False)
    await recorded(clients["desk"], 2)

    async def ids(client: str, **params: Any) -> list[str]:
        return [record["prompt_id"] for record in (await history(clients[client], **params))["items"]]

    assert await ids("ops") == [ops["prompt_id"]]
    assert await ids("deploy") == [deploy["prompt_id"]]
    assert await ids("opsdesk") == [ops["prompt_id"]]  # an operator token limited to ops
    assert await ids("desk") == [deploy["prompt_id"], ops["prompt_id"]]
    assert await ids("deploy", agent="ops") == []  # naming another agent finds nothing
    assert await ids("deploy", thread=OPS_THREAD) == []
    assert await ids("deploy", run=ops["run_id"]) == []
    assert await ids("desk", outcome="denied") == [deploy["prompt_id"]]
    assert await ids("desk", by=STARTER, agent="ops") == [ops["prompt_id"]]


async def test_the_cursor_pages_and_is_refused_when_it_was_not_given_out(
    clients: dict[str, httpx.AsyncClient],
) -> None:
    made = [await settle_approval(clients, "ops", OPS_THREAD, approve=True) for _ in range(3)]
    await recorded(clients["desk"], 3)
    first = await history(clients["desk"], limit=2)
    second = await history(clients["desk"], limit=2, after=first["next"])
    as_cursor = await history(clients["desk"], limit=2, cursor=first["next"])
    listed = [record["prompt_id"] for record in first["items"] + second["items"]]
    assert listed == [prompt["prompt_id"] for prompt in reversed(made)]
    assert second["next"] is None and as_cursor == second
    oldest = await history(clients["desk"], order="oldest", limit=1)
    assert oldest["items"][0]["prompt_id"] == made[0]["prompt_id"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"after": "not-a-cursor"}, "after"),
        ({"after": "aDE6MTIzNDU2Nzg5"}, "after"),  # base64 of h1:123456789, not a position
        ({"cursor": "%%%"}, "cursor"),
        ({"after": "1712345678901-0"}, "after"),  # a raw position is not a cursor the history gave out
        ({"after": A_CURSOR[:-3]}, "after"),  # cut short
        ({"after": A_CURSOR + "AAAA"}, "after"),  # with bytes after its end
        ({"after": A_CURSOR[:-1] + chr(ord(A_CURSOR[-1]) + 1)}, "after"),  # the same bytes written otherwise
        (
            {"after": history_vector_cursor(("1712345678901-0",) * (WIDTH - 1))},
            "after",
        ),  # one partition short
        ({"cursor": "aDI6MTcxMjM0NTY3ODkwMS0w"}, "cursor"),  # base64 of h2:1712345678901-0, not a vector
        ({"after": "x" * 5000}, "after"),
        ({"since": "yesterday"}, "since"),
        ({"until": "2026-13-01T00:00:00Z"}, "until"),
        ({"outcome": "approve"}, "outcome"),
        ({"limit": "0"}, "limit"),
        ({"limit": "501"}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"limit": "1e3"}, "limit"),
        ({"limit": "٣"}, "limit"),  # a digit, but not an ASCII one
        ({"order": "sideways"}, "order"),
        ({"agent": "a" * 201}, "agent"),
        ({"by": ""}, "by"),
    ],
)
async def test_bad_parameters_are_400_naming_the_parameter(
    clients: dict[str, httpx.AsyncClient], params: dict[str, str], field: str
) -> None:
    response = await clients["ops"].get("/v1/history", params=params)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_FAILED"
    assert error["details"]["errors"][0]["field"] == field


async def test_a_cursor_of_an_earlier_version_goes_on_after_its_position(
    clients: dict[str, httpx.AsyncClient],
) -> None:
    made = [
        await settle_approval(clients, agent, thread, approve=True)
        for agent, thread in (("ops", OPS_THREAD), ("deploy", DEPLOY_THREAD))
    ]
    await recorded(clients["desk"], 2)
    old = history_cursor("1-0")  # an h1 cursor: after stream id 1-0, before every record
    assert await history(clients["desk"], after=old) == {"items": [], "next": None, "cursor": None}
    oldest = await history(clients["desk"], after=old, order="oldest")
    assert [record["prompt_id"] for record in oldest["items"]] == [prompt["prompt_id"] for prompt in made]
    first = await history(clients["desk"], limit=1)
    assert len(history_positions(first["next"], WIDTH)) == WIDTH and len(first["next"]) <= 600


async def test_times_with_an_offset_a_date_or_none_are_taken(clients: dict[str, httpx.AsyncClient]) -> None:
    await settle_approval(clients, "ops", OPS_THREAD, approve=True)
    await recorded(clients["desk"], 1)
    assert len((await history(clients["desk"], since="2000-01-01"))["items"]) == 1
    assert len((await history(clients["desk"], since="2000-01-01T00:00:00+02:00"))["items"]) == 1
    assert (await history(clients["desk"], until="2000-01-01T00:00:00Z"))["items"] == []
    assert (await history(clients["desk"], since="9999-12-31T23:59:59Z"))["items"] == []
    assert (await history(clients["desk"], until="0001-01-01T00:00:00"))["items"] == []


async def test_without_a_token_the_history_is_401(scoped: Served) -> None:
    async with scoped.client() as anonymous:
        response = await anonymous.get("/v1/history")
    assert response.status_code == 401


async def test_both_python_clients_read_the_history_a_page_at_a_time(
    scoped: Served, clients: dict[str, httpx.AsyncClient]
) -> None:
    made = [await settle_approval(clients, "ops", OPS_THREAD, approve=True) for _ in range(2)]
    await recorded(clients["desk"], 2)
    since = datetime.now(UTC) - timedelta(hours=1)
    async with Threadgate(scoped.base_url, "tok-desk") as tg:
        first = await tg.history(agent="ops", since=since, limit=1, order="oldest")
        second = await tg.history(agent="ops", since=since, limit=1, order="oldest", after=first.cursor)

    def read_sync() -> Page[dict[str, Any]]:
        with Client(scoped.base_url, "tok-ops") as client:
            return client.history(outcome="approved", since=since.replace(tzinfo=None))

    synced = await asyncio.to_thread(read_sync)
    assert [page.items[0]["prompt_id"] for page in (first, second)] == [
        made[0]["prompt_id"],
        made[1]["prompt_id"],
    ]
    assert first.cursor is not None
    assert [record["prompt_id"] for record in synced.items] == [made[1]["prompt_id"], made[0]["prompt_id"]]
    assert synced.cursor is None
