"""What ``/mcp`` leaves on the gateway's stderr: JSON lines only (a question's wait is a log event, not a
line of text), and no traceback when a client goes away abruptly."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from gateway.base.logs import configure
from tests.integrations.test_mcp_http import (
    ACCEPT,
    INITIALIZE,
    OPS_TOKEN,
    bearer,
    gateway,
    mcp_client,
    open_session,
    pending_prompt,
)
from tests.web.conftest import AGENT_TOKEN


def log_lines(err: str) -> list[dict[str, Any]]:
    """Every line of stderr, each of which must be a JSON object."""
    lines = [line for line in err.splitlines() if line.strip()]
    for line in lines:
        assert line.startswith("{"), f"not a JSON log line: {line!r}"
    return [json.loads(line) for line in lines]


@pytest.mark.parametrize("tool", ["ask_user", "request_approval", "permission_prompt"])
async def test_where_an_mcp_question_waits_is_a_log_event(
    tool: str, capsys: pytest.CaptureFixture[str]
) -> None:
    configure("INFO")
    arguments: dict[str, Any] = {
        "ask_user": {"questions": [{"question": "Deploy?"}]},
        "request_approval": {"tool_name": "db__drop", "arguments": {"db": "staging"}},
        "permission_prompt": {"tool_name": "Bash", "input": {"command": "rm -rf build"}},
    }[tool]
    where = {"X-Threadgate-Session-Channel": f"web:mcp-logs-{tool}", "X-Threadgate-Started-By": "web:alice"}
    async with gateway() as web, mcp_client(web, {**bearer(OPS_TOKEN), **where}) as client:
        task = asyncio.create_task(client.call_tool(tool, arguments))
        prompt = await asyncio.wait_for(pending_prompt(web, "ops"), 10)
        async with web.client() as person:
            room = prompt["thread_id"].removeprefix("web:")
            await person.post(f"/chat/{room}/messages", json={"name": "alice", "text": "yes"})
        await asyncio.wait_for(task, 10)
    events = log_lines(capsys.readouterr().err)
    waiting = [line for line in events if line["event"] == "mcp.prompt_waiting"]
    assert [(line["prompt_id"], line["thread_id"], line["agent"]) for line in waiting] == [
        (prompt["prompt_id"], prompt["thread_id"], "ops")
    ]


@pytest.mark.parametrize("after", ["initialize", "a tool call", "a stream"])
async def test_a_client_that_drops_the_connection_leaves_no_traceback(
    after: str, capsys: pytest.CaptureFixture[str]
) -> None:
    configure("INFO")
    async with gateway() as web, web.client() as client:
        host, port = web.base_url.removeprefix("http://").split(":")
        session = await open_session(client, bearer(AGENT_TOKEN))
        body: dict[str, Any] | None = INITIALIZE
        headers = {**ACCEPT, **bearer(AGENT_TOKEN)}
        method = "POST"
        if after == "a tool call":
            body = {"jsonrpc": "2.0", "id": 3, "method": "tools/call"}
            body["params"] = {"name": "ask_user", "arguments": {"questions": [{"question": "Go?"}]}}
            headers = session
        elif after == "a stream":
            method, body = "GET", None
            headers = {**session, "Accept": "text/event-stream"}
        for pause in (0.0, 0.01, 0.2):
            await _send_and_drop(host, int(port), method, body, headers, pause)
        await asyncio.sleep(0.5)
    for line in log_lines(capsys.readouterr().err):
        assert "exc" not in line and "traceback" not in line, line
        assert line["level"] not in ("error", "critical"), line


async def _send_and_drop(
    host: str, port: int, method: str, body: dict[str, Any] | None, headers: dict[str, str], pause: float
) -> None:
    """Send a request on a raw connection, then close it abruptly (a reset) after ``pause`` seconds."""
    _reader, writer = await asyncio.open_connection(host, port)
    data = json.dumps(body).encode() if body is not None else b""
    lines = [f"{method} /mcp HTTP/1.1", f"Host: {host}:{port}", f"Content-Length: {len(data)}"]
    lines += [f"{name}: {value}" for name, value in headers.items() if name.lower() != "content-length"]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + data)
    await writer.drain()
    if pause:
        await asyncio.sleep(pause)
    writer.transport.abort()
