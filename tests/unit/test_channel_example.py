"""The minimal channel in docs/channels/plugins.md, installed from a temporary folder the way a package
beside Threadgate is (found through its entry point), serves a prompt end to end."""

from __future__ import annotations

import os
import re
import time
import tomllib
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.serve import REPO, ServeProcess, serve_env

PAGE = REPO / "docs" / "channels" / "plugins.md"
FILE_BLOCK = re.compile(r"^```python (?P<file>relay_threadgate/\S+\.py)\n(?P<code>.*?)^```$", re.S | re.M)
ENTRY_POINT = re.compile(r'^\[project\.entry-points\."threadgate\.channels"\]\n(?P<line>relay = \S+)$', re.M)
SECRET = "relay-" + "s" * 20
AGENT_TOKEN = "tok-" + "a" * 28


def install_the_example(folder: Path) -> None:
    """The page's files as a package, with the metadata pip would write for its entry point."""
    text = PAGE.read_text("utf-8")
    files = {match["file"]: match["code"] for match in FILE_BLOCK.finditer(text)}
    assert set(files) == {"relay_threadgate/spec.py", "relay_threadgate/channel.py"}
    for name, code in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(code, "utf-8")
    (folder / "relay_threadgate" / "__init__.py").write_text('"""Relay for Threadgate."""\n', "utf-8")
    entry = ENTRY_POINT.search(text)
    assert entry is not None
    meta = folder / "relay_threadgate-0.1.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: relay-threadgate\nVersion: 0.1\n", "utf-8")
    named = tomllib.loads(entry["line"])  # pip writes the TOML's value unquoted
    lines = "".join(f"{name} = {value}\n" for name, value in named.items())
    (meta / "entry_points.txt").write_text(f"[threadgate.channels]\n{lines}", "utf-8")


@pytest.fixture
def gateway(tmp_path: Path) -> Any:
    install_the_example(tmp_path / "site")
    env = serve_env(
        RELAY_SECRET=SECRET,
        THREADGATE_API_TOKENS=f"ops:agent:{AGENT_TOKEN}",
        PYTHONPATH=os.pathsep.join([str(tmp_path / "site"), str(REPO)]),
    )
    server = ServeProcess(env, tmp_path / "work", name="relay")
    server.start("/readyz")
    try:
        yield server
    finally:
        server.stop()


def _posted(client: httpx.Client, room: str) -> list[dict[str, Any]]:
    response = client.get(f"/relay/posted/{room}", headers={"X-Relay-Secret": SECRET})
    assert response.status_code == 200
    items: list[dict[str, Any]] = response.json()
    return items


def _until(check: Any, timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError("not within the time")


def test_the_documented_channel_answers_a_prompt_end_to_end(gateway: ServeProcess) -> None:
    assert "Channels: relay" in gateway.log.read_text()
    agent = {"Authorization": f"Bearer {AGENT_TOKEN}"}
    with httpx.Client(base_url=gateway.url, timeout=10) as client:
        run = client.post(
            "/v1/runs",
            json={"thread_id": "relay:ops", "agent": "ops", "started_by": "relay:ada"},
            headers=agent,
        )
        assert run.status_code == 201, run.text
        raised = client.post(
            f"/v1/runs/{run.json()['run_id']}/prompts",
            json={"kind": "approval", "questions": [{"question": "Deploy to production?"}]},
            headers=agent,
        )
        assert raised.status_code == 201, raised.text
        prompt_id = raised.json()["prompt_id"]
        shown = _until(lambda: [item for item in _posted(client, "ops") if item["type"] == "pending_prompt"])
        assert "Deploy to production?" in shown[0]["text"]

        def say(user: str, text: str, secret: str = SECRET) -> httpx.Response:
            event = {"room": "ops", "user": user, "text": text, "id": f"{user}-{text}"}
            return client.post("/relay/inbound", json=event, headers={"X-Relay-Secret": secret})

        assert say("ada", "approve", secret="wrong-" + SECRET).status_code == 401
        assert say("eve", "approve").json()["outcome"] == "not_allowed"
        assert say("ada", "approve").json()["outcome"] == "answered"
        assert say("ada", "approve").json()["outcome"] == "duplicate"  # the platform delivered it twice
        prompt = client.get(f"/v1/prompts/{prompt_id}", headers=agent).json()
        assert (prompt["prompt_state"], prompt["answers"][0]["answer"], prompt["answered_by"]) == (
            "answered",
            ["Approve"],
            "relay:ada",
        )
        resolved = _until(
            lambda: [item for item in _posted(client, "ops") if item["type"] == "pending_prompt_resolved"]
        )
        assert "Approve" in resolved[0]["text"]
