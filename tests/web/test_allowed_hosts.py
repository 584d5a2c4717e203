"""DNS rebinding: a page whose own name resolves to the gateway is same-origin with itself, so only its
``Host`` gives it away. Requests naming a host the gateway is not served at are 421, in every mode."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from pydantic import ValidationError

from gateway.api.allowed_hosts import HostAllowList
from gateway.base.settings import Settings
from gateway.demo import Demo
from tests.web.conftest import AGENT_AUTH, raise_prompt, start_run, web_gateway
from tests.web.test_demo import pending_prompt

REBIND = "rebind.attacker.example"
FROM_REBIND = {"Host": REBIND, "Origin": f"http://{REBIND}", "Sec-Fetch-Site": "same-origin"}
EVERY_KIND_OF_ROUTE = [
    ("GET", "/v1/messages"),
    ("GET", "/v1/prompts"),
    ("GET", "/chat/room"),
    ("GET", "/chat/room/events"),
    ("POST", "/chat/room/session"),
    ("GET", "/inbox"),
    ("GET", "/metrics"),
    ("POST", "/slack/events"),
    ("POST", "/telegram/webhook"),
    ("GET", "/openapi.json"),
    ("GET", "/no/such/route"),
]


def _misdirected(response: httpx.Response) -> bool:
    body = response.json()
    return response.status_code == 421 and body["error"]["code"] == "MISDIRECTED_REQUEST"


async def test_a_rebinding_page_can_neither_read_the_room_nor_answer_in_open_mode() -> None:
    async with web_gateway() as web, web.client(AGENT_AUTH) as agent, web.client(FROM_REBIND) as page:
        run = await start_run(agent, "hall")
        prompt = await raise_prompt(agent, run["run_id"])
        async with asyncio.timeout(5):  # an event stream let in would never end
            read = await page.get("/chat/hall/events")
        answered = await page.post("/chat/hall/messages", json={"name": "mallory", "text": "approve"})
        with_token = await page.get(f"/v1/prompts/{prompt['prompt_id']}", headers=AGENT_AUTH)
        state = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()["prompt_state"]
    assert _misdirected(read) and _misdirected(answered) and _misdirected(with_token)
    assert state == "pending"


@pytest.mark.parametrize(("method", "path"), EVERY_KIND_OF_ROUTE)
async def test_every_route_refuses_a_host_it_is_not_served_at(method: str, path: str) -> None:
    async with web_gateway() as web, web.client(FROM_REBIND) as page, asyncio.timeout(5):
        response = await page.request(method, path, headers=AGENT_AUTH)
    assert _misdirected(response), response.text[:300]
    assert response.json()["error"]["details"] == {"host": REBIND}


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost:1", "LOCALHOST.", "[::1]:8787", "[0:0::1]"])
async def test_loopback_names_are_served_on_any_port(host: str) -> None:
    async with web_gateway() as web, web.client({"Host": host, **AGENT_AUTH}) as client:
        response = await client.get("/v1/messages")
    assert response.status_code == 200, response.text[:300]


async def test_the_public_url_and_the_allowed_hosts_are_served_and_nothing_else() -> None:
    settings = {
        "threadgate_public_url": "https://GW.example.com/tg/",
        "threadgate_allowed_hosts": "agents.lan",
    }
    async with web_gateway(**settings) as web, web.client(AGENT_AUTH) as client:
        statuses = {
            host: (await client.get("/v1/messages", headers={"Host": host})).status_code
            for host in ("gw.example.com", "gw.example.com:443", "agents.lan:8787", "example.com", REBIND)
        }
    assert statuses == {
        "gw.example.com": 200,
        "gw.example.com:443": 200,
        "agents.lan:8787": 200,
        "example.com": 421,
        REBIND: 421,
    }


async def test_a_star_in_allowed_hosts_serves_any_host_when_set_explicitly() -> None:
    async with web_gateway(threadgate_allowed_hosts="*") as web, web.client(AGENT_AUTH) as client:
        response = await client.get("/v1/messages", headers={"Host": REBIND})
    assert response.status_code == 200


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
async def test_probes_answer_whatever_host_an_orchestrator_names(path: str) -> None:
    async with web_gateway() as web, web.client({"Host": "10.244.1.17:8787"}) as probe:
        response = await probe.get(path)
    assert response.status_code == 200


def test_bound_to_every_interface_the_machines_addresses_are_not_implied() -> None:
    for bound in ("0.0.0.0", "::"):
        hosts = HostAllowList.from_settings(Settings(_env_file=None, threadgate_host=bound))  # type: ignore[call-arg]
        assert not hosts.allows(bound) and not hosts.allows("10.0.0.5") and not hosts.allows("[fe80::1]")
        assert hosts.allows("localhost:8787")
    named = HostAllowList.from_settings(Settings(_env_file=None, threadgate_host="10.0.0.5"))  # type: ignore[call-arg]
    assert named.allows("10.0.0.5:8787") and not named.allows("10.0.0.6")
    assert not named.allows(None) and not named.allows("") and not named.allows("10.0.0.5:8787:1")


async def test_the_demo_refuses_a_rebinding_page_in_its_chat_and_its_inbox(demo: Demo) -> None:
    operator = {"Authorization": f"Bearer {demo.operator_token}"}
    async with httpx.AsyncClient(base_url=demo.base_url, headers=operator, timeout=10) as client:
        await client.post(f"/chat/{demo.room}/messages", json={"name": "alice", "text": "hello"})
        prompt = await pending_prompt(client, f"web:{demo.room}", set())
        read = await client.get("/v1/prompts", headers=FROM_REBIND)
        approve = await client.post(
            f"/v1/agents/demo/inputs/{prompt['prompt_id']}",
            json={"action": "accept", "from": "web:operator"},
            headers=FROM_REBIND,
        )
        chat = await client.post(
            f"/chat/{demo.room}/messages", json={"name": "alice", "text": "yes"}, headers=FROM_REBIND
        )
        state = (await client.get(f"/v1/prompts/{prompt['prompt_id']}")).json()["prompt_state"]
    assert _misdirected(read) and _misdirected(approve) and _misdirected(chat)
    assert state == "pending"


@pytest.mark.parametrize("entry", ["https://gw.example.com", "gw.example.com/path", "a b", "[::1"])
def test_allowed_hosts_are_host_names_or_addresses(entry: str) -> None:
    with pytest.raises(ValidationError, match="THREADGATE_ALLOWED_HOSTS"):
        Settings(_env_file=None, threadgate_allowed_hosts=f"ok.lan,{entry}")  # type: ignore[call-arg]
    listed = Settings(_env_file=None, threadgate_allowed_hosts=" A.lan:8787,,[::1] ")  # type: ignore[call-arg]
    assert listed.allowed_hosts() == ["a.lan", "::1"]
