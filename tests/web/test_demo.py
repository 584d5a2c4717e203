"""``threadgate demo``: one command serves the chat, the inbox and an agent that asks every prompt kind."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
from typing import Any

import httpx
import pytest

from gateway.cli import main
from gateway.demo import Demo
from gateway.demo.agent import GOODBYE, TOUR


async def pending_prompt(client: httpx.AsyncClient, thread_id: str, seen: set[str]) -> dict[str, Any]:
    """The thread's pending prompt, once there is one not seen before."""
    async with asyncio.timeout(10):
        while True:
            items = (await client.get("/v1/prompts", params={"thread_id": thread_id})).json()["items"]
            fresh = [item for item in items if item["prompt_id"] not in seen]
            if fresh:
                seen.add(fresh[0]["prompt_id"])
                return fresh[0]
            await asyncio.sleep(0.05)


async def echoes(client: httpx.AsyncClient, thread_id: str) -> list[str]:
    """What the agent said back between its welcome and its goodbye, once the tour is over."""
    async with asyncio.timeout(10):
        while True:
            items = (await client.get(f"/v1/threads/{thread_id}/items", params={"limit": 500})).json()[
                "items"
            ]
            texts = [item["content"][0]["text"] for item in items if item["role"] == "agent"]
            if GOODBYE in texts:
                return texts[1 : texts.index(GOODBYE)]
            await asyncio.sleep(0.05)


async def test_demo_agent_asks_each_prompt_kind_in_turn_and_echoes_the_answers(demo: Demo) -> None:
    thread = f"web:{demo.room}"
    form_lines = (
        "project: Orion\ncontact: ops@example.com\nregion: 2\nreplicas: 3\n"
        "launch date: 2025-01-31\npublic: no\nalerts: email, pager"
    )
    replies = ["no, take a snapshot first", "replicas: 3", "1", "2,4", "Orion", "2", form_lines, "done"]
    headers = {"Authorization": f"Bearer {demo.operator_token}"}
    async with httpx.AsyncClient(base_url=demo.base_url, headers=headers, timeout=10) as client:
        await client.post(f"/chat/{demo.room}/messages", json={"name": "alice", "text": "hello"})
        seen: set[str] = set()
        asked = []
        for reply in replies:
            prompt = await pending_prompt(client, thread, seen)
            asked.append(prompt)
            await client.post(f"/chat/{demo.room}/messages", json={"name": "alice", "text": reply})
        echoed = await echoes(client, thread)
        settled = [(await client.get(f"/v1/prompts/{prompt['prompt_id']}")).json() for prompt in asked]

    assert [prompt["kind"] for prompt in asked] == [step.kind for step in TOUR]
    assert asked[0]["tool_call"] == {
        "name": "db__drop",
        "arguments": {"database": "staging", "cascade": True},
    }
    assert (asked[1]["editable"], asked[1]["input_schema"]["properties"]["replicas"]["maximum"]) == (True, 10)
    assert [len(prompt["questions"]) for prompt in asked] == [1, 1, 1, 1, 1, 3, 7, 1]
    assert asked[3]["questions"][0]["multiSelect"] is True
    assert [[answer["answer"] for answer in prompt["answers"]] for prompt in settled] == [
        [["Deny"]],
        [["Approve"]],
        [["staging"]],
        [["Table", "Map"]],
        [["Orion"]],
        [["Postgres"], ["Table"], ["2"]],  # one text maps against every question: seed 000
        [
            ["Orion"],
            ["ops@example.com"],
            ["US East (Virginia)"],
            ["3"],
            ["2025-01-31"],
            ["No"],
            ["Email", "Pager"],
        ],
        [["done"]],
    ]
    assert (settled[0]["note"], settled[0]["approved_call"]) == ("no, take a snapshot first", None)
    assert settled[1]["tool_call"]["arguments"]["replicas"] == 6  # what was asked, kept beside
    assert settled[1]["approved_call"]["arguments"] == {"service": "api", "version": "2.4.0", "replicas": 3}
    assert echoed == [
        'Denied by web:alice: "no, take a snapshot first".',
        "Approved by web:alice as edited: I ran deploy with service = api, version = 2.4.0, replicas = 3.",
        "web:alice chose staging.",
        "web:alice chose Table and Map.",
        'web:alice answered: "Orion".',
        "web:alice answered: Source = Postgres; Sections = Table; Style = 2.",
        "Form from web:alice: project = Orion, contact = ops@example.com, region = us-east, replicas = 3, "
        "launch = 2025-01-31, public = no, alerts = email, pager.",
        "web:alice marked the step done.",
    ]
    assert asked[6]["requested_schema"]["properties"]["replicas"]["maximum"] == 5
    assert asked[7]["url"].startswith("https://")
    assert all(prompt["agent"] == "demo" for prompt in asked)


def test_demo_command_prints_where_to_go_and_stops_cleanly_on_ctrl_c() -> None:
    env = {key: value for key, value in os.environ.items() if key != "REDIS_URL"}
    process = subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", "demo", "--port", "0", "--room", "tour"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        lines = []
        for line in process.stdout:
            lines.append(line)
            if line.startswith("Press Ctrl+C"):
                break
        banner = "".join(lines)
        chat = re.search(r"Chat:\s+(\S+)", banner)
        inbox = re.search(r"Inbox:\s+(\S+)#token=", banner)
        assert chat and inbox, banner
        assert chat.group(1).endswith("/chat/tour")
        assert httpx.get(chat.group(1), timeout=5).status_code == 200
        assert httpx.get(inbox.group(1), timeout=5).status_code == 200
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=15) == 0
        assert process.stderr is not None and process.stderr.read() == ""
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_demo_on_a_busy_port_says_to_pick_another(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        code = main(["demo", "--port", str(busy.getsockname()[1])])
    assert code == 7
    assert "pass --port or set THREADGATE_PORT" in capsys.readouterr().err
