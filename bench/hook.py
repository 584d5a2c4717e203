"""Figure 9: what a hook costs a tool call the agent's approval policy allows, beside starting Python.

``threadgate hook claude`` answers a ``Read`` the policy lets through (a ``PreToolUse`` event, as a headless
run's matcher ``*`` sends for every call) against one gateway process; ``python -c pass`` in the same
interpreter is the floor. Runs alternate, and the figure is the median of the paired ratios. Beside it,
``threadgate mcp``'s start-up: from launch to its answer to ``initialize`` on stdio (no target).
"""

from __future__ import annotations

import json
import secrets
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from bench.http import ROOT, checkout_env, server_process
from bench.redis_proc import free_port

AGENT = "bench-hook"
SESSION_CHANNEL = "web:bench-hook"


@dataclass(frozen=True, slots=True)
class HookFigure:
    allowed_ms: float
    python_ms: float
    ratio: float
    pairs: int
    mcp_startup_ms: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "allowed_ms": round(self.allowed_ms, 1),
            "python_ms": round(self.python_ms, 1),
            "ratio": round(self.ratio, 2),
            "pairs": self.pairs,
            "mcp_startup_ms": round(self.mcp_startup_ms, 1),
        }


def _threadgate() -> list[str]:
    """The console script beside this interpreter (what a tool's hook setting runs), else ``-m``."""
    script = Path(sys.executable).with_name("threadgate")
    return [str(script)] if script.exists() else [sys.executable, "-m", "gateway.cli"]


def _timed_ms(command: list[str], env: dict[str, str], stdin: str = "") -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(
        command, input=stdin, capture_output=True, text=True, env=env, timeout=60, check=True
    )
    return (time.perf_counter() - started) * 1000, done.stdout


def _mcp_startup_ms(env: dict[str, str]) -> float:
    """From launching ``threadgate mcp`` to the first line it answers to ``initialize``."""
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        },
    }
    started = time.perf_counter()
    process = subprocess.Popen(
        [*_threadgate(), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write((json.dumps(hello) + "\n").encode())
    process.stdin.flush()
    process.stdout.readline()
    elapsed = (time.perf_counter() - started) * 1000
    process.stdin.close()
    process.wait(timeout=30)
    return elapsed


def _check_quick(env: dict[str, str], stdin: str) -> None:
    """The figure measures the quick path: a run that loads pydantic went the whole way instead."""
    probe = (
        "import sys\nfrom gateway.cli import main\nmain(['hook', 'claude'])\n"
        "print('pydantic' in sys.modules)\n"
    )
    loaded = _timed_ms([sys.executable, "-c", probe], env, stdin)[1].strip()
    if loaded != "False":
        raise RuntimeError("the hook went the whole way for a call the policy allows")


async def hook_figure(redis_url: str, pairs: int) -> HookFigure:
    agent_token, operator_token = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    port = free_port()
    settings = {
        "REDIS_URL": redis_url,
        "THREADGATE_WEB_CHAT": "open",
        "THREADGATE_API_TOKENS": f"bench:agent:{agent_token}:*,desk:operator:{operator_token}",
        "THREADGATE_LOG_LEVEL": "WARNING",
    }
    command = [sys.executable, "-m", "gateway.cli", "serve", "--host", "127.0.0.1", "--port", str(port)]
    async with server_process(command, settings, port, "/readyz") as server:
        headers = {"Authorization": f"Bearer {operator_token}"}
        async with aiohttp.ClientSession(base_url=server.base, headers=headers) as client:
            body = {"approval": {"default": "destructive"}}
            async with client.put(f"/v1/agents/{AGENT}", json=body) as response:
                if response.status != 200:
                    raise RuntimeError(f"the agent's policy was not set: {await response.text()}")
        env = checkout_env(
            {
                "THREADGATE_URL": server.base,
                "THREADGATE_TOKEN": agent_token,
                "THREADGATE_AGENT": AGENT,
                "THREADGATE_SESSION_CHANNEL": SESSION_CHANNEL,
            }
        )
        call = {
            "hook_event_name": "PreToolUse",
            "session_id": "bench-session",
            "cwd": str(ROOT),
            "tool_name": "Read",
            "tool_input": {"file_path": str(ROOT / "README.md")},
        }
        hook, floor = [*_threadgate(), "hook", "claude"], [sys.executable, "-c", "pass"]
        _check_quick(env, json.dumps(call))
        for _ in range(3):  # warm the page cache and the bytecode caches
            _timed_ms(hook, env, json.dumps(call))
            _timed_ms(floor, env)
        hooks, floors = [], []
        for _ in range(pairs):
            took, printed = _timed_ms(hook, env, json.dumps(call))
            if printed.strip():
                raise RuntimeError(f"the hook asked about a call the policy allows: {printed[:200]}")
            hooks.append(took)
            floors.append(_timed_ms(floor, env)[0])
        mcp = statistics.median(_mcp_startup_ms(env) for _ in range(3))
    ratios = [took / base for took, base in zip(hooks, floors, strict=True)]
    return HookFigure(
        statistics.median(hooks), statistics.median(floors), statistics.median(ratios), pairs, mcp
    )
