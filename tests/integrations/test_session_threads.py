"""Session threads: one header per agent session, one thread for all its prompts, bound in Redis."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import httpx
import pytest

from gateway.base.errors import GatewayError
from gateway.base.ids import ThreadRef
from gateway.decision.session_threads import SessionThreads, parse_channel_ref
from gateway.delivery.channel import ChannelError, Channels
from gateway.store import Store
from tests.integrations.conftest import OPERATOR_TOKEN, Gateway, unique
from tests.support.memory_channel import MemoryChannel


@dataclass
class StartingChannel(MemoryChannel):
    """The in-memory channel plus thread starts: records each header, can fail or be slow."""

    headers: list[tuple[str, str]] = field(default_factory=list)
    fail_starts: int = 0
    start_delay: float = 0.0

    async def start_thread(self, channel: ThreadRef, text: str) -> str:
        await asyncio.sleep(self.start_delay)
        if self.fail_starts:
            self.fail_starts -= 1
            raise ChannelError("platform said no")
        self.headers.append((channel.thread_id, text))
        return f"{channel.thread_id}-{len(self.headers)}"


def threads_on(store: Store, channel: MemoryChannel) -> SessionThreads:
    return SessionThreads(store, Channels([channel]), claim_ttl_ms=2000, poll_s=0.01)


async def test_first_prompt_posts_the_header_and_later_ones_reuse_the_thread(store: Store) -> None:
    channel = StartingChannel("web")
    threads = threads_on(store, channel)

    first = await threads.thread_for("claude-code:s1", "web:sessions", "Claude Code in api, session s1")
    again = await threads.thread_for("claude-code:s1", "web:sessions", "Claude Code in api, session s1")

    assert (first.created, again.created) == (True, False)
    assert first.thread_id == again.thread_id == "web:sessions-1"
    assert channel.headers == [("web:sessions", "Claude Code in api, session s1")]
    logged = [entry for _id, entry in await store.thread_items(first.thread_id, None, 10)]
    assert [entry["content"][0]["text"] for entry in logged] == ["Claude Code in api, session s1"]


async def test_the_binding_outlives_the_process_that_made_it(store: Store) -> None:
    made = await threads_on(store, StartingChannel("web")).thread_for("codex:s2", "web:ops", "Codex in x")
    later = threads_on(store, StartingChannel("web"))  # another gateway process on the same Redis
    assert await later.get("codex:s2") == made.thread_id


async def test_concurrent_first_prompts_start_one_thread(store: Store) -> None:
    channel = StartingChannel("web", start_delay=0.05)
    threads = threads_on(store, channel)
    found = await asyncio.gather(*(threads.thread_for("mcp:s3", "web:ops", "Agent in y") for _ in range(5)))
    assert len({item.thread_id for item in found}) == 1
    assert sum(item.created for item in found) == 1
    assert len(channel.headers) == 1


async def test_a_failed_header_is_unavailable_and_the_next_prompt_tries_again(store: Store) -> None:
    channel = StartingChannel("web", fail_starts=1)
    threads = threads_on(store, channel)
    with pytest.raises(GatewayError) as failed:
        await threads.thread_for("claude-code:s4", "web:ops", "Claude Code in z")
    assert (failed.value.code, failed.value.status) == ("SESSION_THREAD_UNAVAILABLE", 503)
    assert (await threads.thread_for("claude-code:s4", "web:ops", "Claude Code in z")).created


async def test_a_channel_that_cannot_start_threads_is_refused(store: Store) -> None:
    threads = threads_on(store, MemoryChannel("web"))
    with pytest.raises(GatewayError) as refused:
        await threads.thread_for("claude-code:s5", "web:ops", "Claude Code in z")
    assert refused.value.code == "THREADS_NOT_SUPPORTED"


@pytest.mark.parametrize(
    ("ref", "parts"),
    [
        ("slack:C0456", ("C0456",)),
        ("telegram:-100123", ("-100123",)),
        ("telegram:-100123:42", ("-100123", "42")),
        ("discord:80351110224678912", ("80351110224678912",)),
        ("web:ops-room", ("ops-room",)),
    ],
)
def test_channel_refs_parse_per_platform(ref: str, parts: tuple[str, ...]) -> None:
    assert parse_channel_ref(ref).parts == parts


@pytest.mark.parametrize("ref", ["slack:C0456:1712345678.000100", "slack:", "matrix:!room", "web:two words"])
def test_malformed_channel_refs_are_invalid(ref: str) -> None:
    with pytest.raises(GatewayError) as invalid:
        parse_channel_ref(ref)
    assert invalid.value.code == "INVALID_CHANNEL"


async def test_session_thread_endpoint_creates_then_returns_the_same(gateway: Gateway) -> None:
    key = unique("claude-code:session")
    body = {"channel": "web:sessions", "header": "Claude Code in api, session 1"}
    async with gateway.agent_client() as agent:
        assert (await agent.get(f"/v1/sessions/{key}/thread")).json()["error"]["code"] == "SESSION_NOT_FOUND"
        created = await agent.put(f"/v1/sessions/{key}/thread", json=body)
        found = await agent.put(f"/v1/sessions/{key}/thread", json=body)
        looked_up = await agent.get(f"/v1/sessions/{key}/thread")
    assert (created.status_code, found.status_code, looked_up.status_code) == (201, 200, 200)
    assert created.json()["thread_id"] == found.json()["thread_id"] == looked_up.json()["thread_id"]
    assert found.json()["created"] is False


async def test_session_thread_endpoint_needs_an_agent_token(gateway: Gateway) -> None:
    headers = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}
    async with httpx.AsyncClient(base_url=gateway.url, headers=headers, timeout=10) as operator:
        response = await operator.put(
            "/v1/sessions/s/thread", json={"channel": "web:sessions", "header": "Claude Code in api"}
        )
    assert (response.status_code, response.json()["error"]["code"]) == (403, "FORBIDDEN")


async def test_session_thread_endpoint_refuses_an_unconfigured_channel(gateway: Gateway) -> None:
    async with gateway.agent_client() as agent:
        response = await agent.put(
            f"/v1/sessions/{unique('s')}/thread", json={"channel": "slack:C0456", "header": "Codex in api"}
        )
    assert (response.status_code, response.json()["error"]["code"]) == (400, "CHANNEL_NOT_CONFIGURED")


async def test_a_tool_call_is_bound_to_the_first_prompt_asking_about_it(store: Store) -> None:
    bindings = threads_on(store, StartingChannel("web")).bindings
    assert await bindings.call_prompt("claude-code:s9", "toolu_1") is None
    assert await bindings.bind_call("claude-code:s9", "toolu_1", "prm_first") == "prm_first"
    assert await bindings.bind_call("claude-code:s9", "toolu_1", "prm_second") == "prm_first"
    assert await bindings.call_prompt("claude-code:s9", "toolu_1") == "prm_first"


async def test_a_settled_prompt_bound_to_a_call_can_be_replaced_by_name_only(store: Store) -> None:
    bindings = threads_on(store, StartingChannel("web")).bindings
    await bindings.bind_call("codex:s9", "call_1", "prm_expired")
    assert await bindings.bind_call("codex:s9", "call_1", "prm_new", replaces="prm_other") == "prm_expired"
    assert await bindings.bind_call("codex:s9", "call_1", "prm_new", replaces="prm_expired") == "prm_new"


async def _approval(client: httpx.AsyncClient, tool_call: dict[str, object]) -> str:
    """An approval of ``tool_call`` raised in a thread of its own (so none supersedes another)."""
    run = await client.post(
        "/v1/runs",
        json={"thread_id": f"web:{unique('calls')}", "agent": "claude-code", "started_by": "web:alice"},
    )
    raised = await client.post(f"/v1/runs/{run.json()['run_id']}/approvals", json={"tool_call": tool_call})
    assert raised.status_code == 201, raised.text
    prompt_id: str = raised.json()["prompt_id"]
    return prompt_id


async def test_call_bindings_over_http_answer_201_then_200_and_404_when_unbound(gateway: Gateway) -> None:
    session = unique("claude-code")
    async with gateway.agent_client() as client:
        ids = [
            await _approval(client, {"name": "Bash", "arguments": {"command": command}})
            for command in ("npm test", "npm publish")
        ]
        first = await client.put(f"/v1/sessions/{session}/calls/toolu_1", json={"prompt_id": ids[0]})
        again = await client.put(f"/v1/sessions/{session}/calls/toolu_1", json={"prompt_id": ids[1]})
        unknown = await client.get(f"/v1/sessions/{session}/calls/toolu_2")
        bad = await client.put(f"/v1/sessions/{session}/calls/toolu_3", json={"prompt_id": "not a prompt"})
    assert (first.status_code, first.json()["created"]) == (201, True)
    assert (again.status_code, again.json()["prompt_id"], again.json()["created"]) == (200, ids[0], False)
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, "CALL_NOT_FOUND")
    assert bad.status_code in (400, 404, 422)


async def test_a_binding_takes_only_the_approval_of_the_call_it_binds(gateway: Gateway) -> None:
    """A decision answers the call it was raised for: a prompt about another call, or one already settled,
    is never bound to a fresh call (the resumed call would read its answer as its own)."""
    session = unique("claude-code")
    listing = {"name": "Bash", "arguments": {"command": "ls -la", "description": "List files"}}
    async with gateway.agent_client() as client:
        pending = await _approval(client, listing)
        other_calls = [
            {"name": "Bash", "arguments": {"command": "rm -rf /", "description": "List files"}},
            {"name": "Write", "arguments": listing["arguments"]},
            {"name": "Bash", "arguments": {**listing["arguments"], "dangerouslyDisableSandbox": True}},  # type: ignore[dict-item]
            {"name": "Bash", "arguments": {"command": "ls -la /"}},
        ]
        for n, other in enumerate(other_calls):
            mismatched = await client.put(
                f"/v1/sessions/{session}/calls/toolu_m{n}", json={"prompt_id": pending, "tool_call": other}
            )
            assert (mismatched.status_code, mismatched.json()["error"]["code"]) == (409, "CALL_MISMATCH"), (
                other
            )
        # The same call binds: its keys in another order, and a command is its command, whatever the
        # description, timeout or backgrounding the agent wrote this time.
        same = {
            "arguments": {"description": "Show the files", "command": "ls -la", "run_in_background": True},
            "name": "Bash",
        }
        bound = await client.put(
            f"/v1/sessions/{session}/calls/toolu_1", json={"prompt_id": pending, "tool_call": same}
        )
        assert bound.status_code == 201, bound.text

        approved = await _approval(client, listing)
        answer = {"action": "accept", "from": "web:alice"}
        headers = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}
        async with httpx.AsyncClient(base_url=gateway.url, headers=headers, timeout=10) as operator:
            accepted = await operator.post(f"/v1/agents/claude-code/inputs/{approved}", json=answer)
        assert accepted.status_code == 200, accepted.text
        for body in ({"prompt_id": approved}, {"prompt_id": approved, "tool_call": listing}):
            fresh = await client.put(f"/v1/sessions/{session}/calls/toolu_fresh", json=body)
            assert (fresh.status_code, fresh.json()["error"]["code"]) == (409, "CALL_MISMATCH")
        assert (await client.get(f"/v1/sessions/{session}/calls/toolu_fresh")).status_code == 404
