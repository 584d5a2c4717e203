"""The demo is something your own agent can reach: it prints an agent token and a curl line that raises a
prompt into its room, and every prompt says where a person answers it (``thread_url``)."""

from __future__ import annotations

import asyncio
import subprocess

import httpx
import pytest

from gateway.base.ids import ThreadRef
from gateway.base.models import Prompt, ThreadItem
from gateway.client import ask_human
from gateway.delivery.channel import Channels
from gateway.demo import Demo, banner
from tests.support.answering import answer_next


def _exported(demo: Demo) -> dict[str, str]:
    """THREADGATE_URL and THREADGATE_TOKEN as the banner's export line sets them."""
    [line] = [line.strip() for line in banner(demo).splitlines() if line.strip().startswith("export ")]
    pairs = dict(word.split("=", 1) for word in line.removeprefix("export ").split())
    return pairs


async def test_the_banner_gives_an_agent_token_that_raises_into_the_room(demo: Demo) -> None:
    exported = _exported(demo)
    assert exported == {"THREADGATE_URL": demo.base_url, "THREADGATE_TOKEN": demo.your_token}
    assert demo.your_token not in (demo.agent_token, demo.operator_token)
    # The banner's curl line, run as printed, raises an approval into the demo room.
    [curl] = [line.strip() for line in banner(demo).splitlines() if line.strip().startswith("RUN=$(curl")]
    ran = await asyncio.to_thread(
        subprocess.run, ["bash", "-c", curl], env={"PATH": "/usr/bin:/bin", **exported}, capture_output=True
    )
    assert ran.returncode == 0, ran.stderr
    prompt = httpx.Response(201, content=ran.stdout).json()
    assert prompt["thread_id"] == demo.your_thread_id and prompt["prompt_state"] == "pending"
    assert prompt["thread_url"] == demo.your_chat_url
    assert demo.your_chat_url in banner(demo)


async def test_a_prompt_and_a_session_thread_say_where_a_person_opens_them(demo: Demo) -> None:
    headers = {"Authorization": f"Bearer {demo.your_token}"}
    async with httpx.AsyncClient(base_url=demo.base_url, headers=headers, timeout=10) as api:
        session = await api.put(
            "/v1/sessions/my-agent:s1/thread", json={"channel": "web:ops", "header": "hi"}
        )
        thread_id = session.json()["thread_id"]
        assert session.json()["thread_url"] == f"{demo.base_url}/chat/{thread_id.removeprefix('web:')}"
        again = await api.get("/v1/sessions/my-agent:s1/thread")
        assert again.json()["thread_url"] == session.json()["thread_url"]
        run = await api.post("/v1/runs", json={"thread_id": thread_id, "agent": "my-agent"})
        raised = await api.post(
            f"/v1/runs/{run.json()['run_id']}/prompts",
            json={"kind": "text", "questions": [{"question": "Why?"}]},
        )
        read = await api.get(f"/v1/prompts/{raised.json()['prompt_id']}")
    assert raised.json()["thread_url"] == read.json()["thread_url"] == session.json()["thread_url"]
    assert (await httpx.AsyncClient().get(read.json()["thread_url"])).status_code == 200


class Plain:
    """A channel that cannot say where its threads open (no ``permalink``)."""

    platform = "plain"

    async def post(self, thread: ThreadRef, item: ThreadItem) -> object:
        raise AssertionError("not posted to")


def test_a_channel_without_permalinks_gives_no_thread_url() -> None:
    channels = Channels([Plain()])  # type: ignore[list-item]
    assert channels.permalink("plain:room") is None
    assert channels.permalink("nowhere:room") is None


async def test_ask_human_prints_where_its_prompt_waits(
    demo: Demo, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for key, value in {
        "THREADGATE_URL": demo.base_url,
        "THREADGATE_TOKEN": demo.your_token,
        "THREADGATE_SESSION_CHANNEL": "web:ops",
        "THREADGATE_STARTED_BY": demo.you,
    }.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("THREADGATE_THREAD", raising=False)
    monkeypatch.delenv("THREADGATE_AGENT", raising=False)
    capsys.readouterr()

    def in_ops(prompt: Prompt) -> bool:
        return prompt.thread_id.startswith("web:ops-")

    answering = asyncio.to_thread(answer_next, demo.base_url, demo.operator_token, demo.you, ["b"], in_ops)
    chosen, _ = await asyncio.gather(asyncio.to_thread(ask_human, "Which?", ["a", "b"]), answering)
    assert chosen == "b"
    [line] = [line for line in capsys.readouterr().err.splitlines() if "waiting for an answer" in line]
    room = line.split(" in web:", 1)[1].split(" ", 1)[0]
    assert room.startswith("ops-")
    assert line == f"threadgate: waiting for an answer in web:{room} at {demo.base_url}/chat/{room}"
