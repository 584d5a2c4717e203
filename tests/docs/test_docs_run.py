"""Every command (bash, sh, console) and program (python) in the README and docs runs against a demo
gateway started here, with the demo's tokens exported as the docs say; a block that cannot run here is
marked just above with ``<!-- doc-runner: skip (why) -->``. A person answers whatever the blocks ask."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.demo import Demo, running_demo
from gateway.demo.agent import AGENT
from tests.docs.runner import PAGES, REPO, SHELL, Answerer, Block, blocks, runnable

BLOCK_TIMEOUT_S = 60


@pytest.fixture(scope="module")
def demo() -> Iterator[Demo]:
    """``threadgate demo`` on a free port, served from its own thread for the whole module."""
    started: list[Demo] = []
    ready, stop = threading.Event(), threading.Event()

    async def serve() -> None:
        async with running_demo("127.0.0.1", 0, "demo", heartbeat_s=0.5, poll_s=2.0, grace_s=0.1) as running:
            started.append(running)
            ready.set()
            await asyncio.to_thread(stop.wait)

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    assert ready.wait(30), "the demo did not start"
    yield started[0]
    stop.set()
    thread.join(timeout=15)


def environment(demo: Demo, tmp: Path) -> dict[str, str]:
    """What a reader has after following the docs: the demo's printed export line, an operator token
    where a block names one, and a place to ask (the web chat room, answered as web:you)."""
    keep = {key: value for key, value in os.environ.items() if not key.startswith(("THREADGATE_", "REDIS_"))}
    return {
        **keep,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{keep.get('PATH', '')}",
        "PYTHONPATH": str(REPO),
        "THREADGATE_URL": demo.base_url,
        "THREADGATE_TOKEN": demo.your_token,
        "OPERATOR_TOKEN": demo.operator_token,
        "THREADGATE_SESSION_CHANNEL": "web:docs",
        "THREADGATE_STARTED_BY": demo.you,
        "THREADGATE_WAIT_SECONDS": "30",
        "HOME": str(tmp),
    }


def run(block: Block, env: dict[str, str], tmp: Path) -> subprocess.CompletedProcess[str]:
    if block.lang in SHELL:
        command = ["bash", "-euo", "pipefail", "-c", block.commands()]
    else:
        program = tmp / f"block_{block.line}.py"
        program.write_text(block.code, encoding="utf-8")
        command = [sys.executable, str(program)]
    return subprocess.run(
        command, cwd=REPO, env=env, capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S, check=False
    )


def test_every_block_is_run_or_says_why_not() -> None:
    """A mark is either ``skip (a reason)`` or nothing: a bare skip, or a typo, hides a block silently."""
    problems = [
        f"{block.where}: <!-- doc-runner:{block.mark}--> is not 'skip (why)'"
        for page in PAGES
        for block in blocks(page)
        if block.mark is not None and block.skipped_because is None
    ]
    assert not problems, "\n".join(problems)


def test_the_runner_finds_the_blocks_it_must_run() -> None:
    """The quickstart's and the API page's examples are run, not skipped: the runner reads them."""
    ran = {block.page.name for page in PAGES for block in runnable(page) if block.skipped_because is None}
    assert {"quickstart.md", "api.md", "integrations.md"} <= ran


@pytest.mark.parametrize("page", [page for page in PAGES if runnable(page)], ids=lambda page: page.name)
def test_the_page_runs(page: Path, demo: Demo, tmp_path: Path) -> None:
    env = environment(demo, tmp_path)
    failures = []
    with Answerer(demo.base_url, demo.operator_token, demo.operator, skip_agents={AGENT}):
        for block in runnable(page):
            if block.skipped_because is not None:
                continue
            done = run(block, env, tmp_path)
            if done.returncode != 0:
                failures.append(f"{block.where} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    assert not failures, "\n\n".join(failures)
