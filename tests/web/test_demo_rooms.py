"""Everyone who tries the demo gets a room of their own, and your own agent's prompts get one more: tours
and your agent's prompts never supersede each other, and the printed Python line runs as printed."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from channels.web.channel import own_room
from gateway.base.ids import parse_thread_id
from gateway.demo import Demo, banner
from gateway.demo.agent import TOUR, WELCOME
from tests.support.answering import answer_next
from tests.web.test_demo import pending_prompt

REPO = Path(__file__).resolve().parents[2]
NAMES = ["alice", "carol", "bob.smith", "Bob-2", "x" * 64, "a_b.c-d"]


@pytest.mark.parametrize("name", NAMES)
async def test_signing_in_to_the_demo_room_sends_each_name_on_to_a_room_of_its_own(
    demo: Demo, name: str
) -> None:
    async with httpx.AsyncClient(base_url=demo.base_url, timeout=10) as client:
        signed = (await client.post(f"/chat/{demo.room}/session", json={"name": name})).json()
        elsewhere = (await client.post(f"/chat/{signed['room']}/session", json={"name": name})).json()
    assert signed["room"] == own_room(demo.room, name)
    assert f"web:{signed['room']}" == demo.own_thread_id(name)
    parse_thread_id(f"web:{signed['room']}")  # a room name the chat takes
    assert signed["room"].startswith(f"{demo.room}-")
    assert "room" not in elsewhere  # only the lobby sends people on


def test_look_alike_names_get_rooms_apart() -> None:
    rooms = {own_room("demo", name) for name in ["bob.smith", "bob_smith", "Bob.smith", "bob.smith2"]}
    assert len(rooms) == 4
    long = {own_room("d" * 60, name) for name in ["x" * 64, "y" * 64, "x" * 63]}
    assert len(long) == 3 and all(len(room) <= 64 for room in long)


async def test_two_people_tour_the_demo_side_by_side_each_in_their_own_room(demo: Demo) -> None:
    headers = {"Authorization": f"Bearer {demo.operator_token}"}
    async with httpx.AsyncClient(base_url=demo.base_url, headers=headers, timeout=10) as client:
        rooms = {}
        for name in ("alice", "carol"):
            rooms[name] = (await client.post(f"/chat/{demo.room}/session", json={"name": name})).json()[
                "room"
            ]
            await client.post(f"/chat/{rooms[name]}/messages", json={"name": name, "text": "hello"})
        first = {name: await pending_prompt(client, f"web:{room}", set()) for name, room in rooms.items()}
        # carol answers her own first card; alice's stays open, not superseded.
        said = await client.post(
            f"/chat/{rooms['carol']}/messages", json={"name": "carol", "text": "approve"}
        )
        assert said.json()["outcome"] == "answered"
        alice_first = (await client.get(f"/v1/prompts/{first['alice']['prompt_id']}")).json()
    # Each reads their own room, not the other's.
    async with httpx.AsyncClient(base_url=demo.base_url, timeout=10) as visitor:
        for name, room in rooms.items():
            for reader, status in ((name, 200), ("carol" if name == "alice" else "alice", 404)):
                async with visitor.stream("GET", f"/chat/{room}/events", params={"name": reader}) as read:
                    assert read.status_code == status, (reader, room)
    assert {prompt["kind"] for prompt in first.values()} == {TOUR[0].kind}
    assert alice_first["prompt_state"] == "pending"


async def test_your_agents_room_is_apart_from_the_tours_and_a_message_there_starts_no_tour(
    demo: Demo,
) -> None:
    headers = {"Authorization": f"Bearer {demo.your_token}"}
    async with httpx.AsyncClient(base_url=demo.base_url, headers=headers, timeout=10) as api:
        assert not demo.your_thread_id.startswith(f"{demo.thread_id}-")
        assert demo.your_thread_id not in {
            demo.own_thread_id(name) for name in ("my-agent", "_my-agent", "you")
        }
        run = await api.post(
            "/v1/runs", json={"thread_id": demo.your_thread_id, "agent": "my-agent", "started_by": demo.you}
        )
        assert run.status_code == 201, run.text
        said = await api.post(f"/chat/{demo.your_room}/messages", json={"name": "you", "text": "hello"})
        assert said.status_code == 202
        await asyncio.sleep(1.0)  # the demo agent hears every message within a poll
        items = (await api.get(f"/v1/threads/{demo.your_thread_id}/items")).json()["items"]
        prompts = (await api.get("/v1/prompts", params={"thread_id": demo.your_thread_id})).json()["items"]
    welcome = WELCOME.split("{", 1)[0]
    assert not [item for item in items if item["role"] == "agent" and welcome in str(item["content"])]
    assert prompts == []


def _printed_python_line(demo: Demo) -> str:
    [line] = [line.strip() for line in banner(demo).splitlines() if "require_approval.py" in line]
    return line


async def test_the_printed_python_line_runs_as_printed_from_the_checkout(
    demo: Demo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)  # where ./scripts/demo runs the demo, and where a reader types the line
    line = _printed_python_line(demo)
    assert "THREADGATE_THREAD=" + demo.your_thread_id in line
    env = {
        "PATH": "/usr/bin:/bin",  # no virtualenv active: a bare `python` is the system's (or none)
        "THREADGATE_URL": demo.base_url,
        "THREADGATE_TOKEN": demo.your_token,
        "THREADGATE_WAIT_SECONDS": "30",
    }
    running = asyncio.to_thread(
        subprocess.run, ["bash", "-c", line], cwd=REPO, env=env, capture_output=True, text=True, timeout=60
    )

    def in_your_room(prompt: object) -> bool:
        return getattr(prompt, "thread_id", None) == demo.your_thread_id

    async def answer() -> None:
        seen: set[str] = set()
        for words in (["sessions_old"], ["approve"]):
            await asyncio.to_thread(
                answer_next, demo.base_url, demo.operator_token, demo.you, words, in_your_room, seen
            )

    ran, _ = await asyncio.gather(running, answer())
    assert ran.returncode == 0, ran.stderr
    assert "dropped sessions_old" in ran.stdout


def test_the_printed_python_line_names_this_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    demo = Demo("http://127.0.0.1:8787", "demo", "a", "o", "web", "t")
    for cwd, interpreter, shown in [
        (REPO, REPO / ".venv/bin/python", ".venv/bin/python examples/require_approval.py"),
        (Path("/"), Path("/opt/tg/bin/python3"), f"opt/tg/bin/python3 {str(REPO / 'examples')[1:]}"),
        (REPO / "docs", Path("/usr/local/bin/python3.12"), "/usr/local/bin/python3.12 "),
    ]:
        monkeypatch.chdir(cwd)
        monkeypatch.setattr(sys, "executable", str(interpreter))
        assert shown in demo.example_line()
        assert " python " not in f" {demo.example_line()} "


@pytest.mark.parametrize("page", ["README.md", "docs/quickstart.md"])
def test_the_demo_output_the_docs_show_is_what_the_demo_prints(
    page: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)  # as ./scripts/demo runs it, with the checkout's .venv
    monkeypatch.setattr(sys, "executable", str(REPO / ".venv" / "bin" / "python"))
    demo = Demo("http://127.0.0.1:8787", "demo", "agent", "OPERATOR", "web", "YOURS")
    printed = banner(demo).replace("OPERATOR", "<generated operator token>")
    printed = printed.replace("YOURS", "<generated agent token>")
    text = (REPO / page).read_text(encoding="utf-8")
    start = text.index("```\nThreadgate demo is running") + 4
    shown = text[start : text.index("\n```", start)]
    assert shown == printed
