"""``threadgate serve --workers 2``, for real: two worker processes answer on one port, their metrics add
up whichever answers a scrape, SIGTERM on the parent stops both, a worker that dies is started again, and
workers whose parent was killed stop by themselves."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from gateway.process.workers import METRICS_DIR
from tests.support.redis_server import RedisServer
from tests.support.serve import ServeProcess, serve_env

pytestmark = [pytest.mark.slow, pytest.mark.redis]

AGENT = {"Authorization": "Bearer agent-token"}
QUESTION = {"kind": "text", "questions": [{"question": "Which branch should I deploy?"}]}
START_TIMEOUT_S = 120.0  # two gateways importing at once on a busy machine
ATTEMPTS = 200


def fresh_client() -> httpx.Client:
    """No keep-alive: every request is a new connection, which the kernel hands to either worker."""
    return httpx.Client(timeout=10, limits=httpx.Limits(max_keepalive_connections=0))


def pids_serving(url: str, at_least: int = 2, among: set[int] | None = None) -> set[int]:
    """The pids ``/healthz`` names over new connections, until ``at_least`` of them (not in ``among``)."""
    seen: set[int] = set()
    with fresh_client() as client:
        for _ in range(ATTEMPTS):
            pid = client.get(f"{url}/healthz").json()["pid"]
            if among is None or pid not in among:
                seen.add(pid)
            if len(seen) >= at_least:
                break
    return seen


def parent_of(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"^PPid:\s+(\d+)", status, re.MULTILINE).group(1))  # type: ignore[union-attr]


def alive(pid: int) -> bool:
    """Running (a zombie left for a reaper that never comes counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def until(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(0.05)


def events(server: ServeProcess, name: str) -> list[dict[str, Any]]:
    lines = server.log.read_text().splitlines()
    return [found for line in lines if line.startswith("{") and (found := json.loads(line))["event"] == name]


@pytest.fixture
def server(redis_server: RedisServer, tmp_path: Path) -> Iterator[ServeProcess]:
    redis_server.flush()
    env = serve_env(
        REDIS_URL=redis_server.url,
        THREADGATE_API_TOKENS="agent:agent:agent-token:*",
        THREADGATE_WEB_CHAT="open",
        THREADGATE_LOG_LEVEL="INFO",
        THREADGATE_SHUTDOWN_GRACE_S="2",
    )
    serving = ServeProcess(env, tmp_path, options=("--workers", "2"))
    serving.launch()
    try:
        serving.wait_ready("/readyz", timeout=START_TIMEOUT_S)
        serving.wait_workers(timeout=START_TIMEOUT_S)
        yield serving
    finally:
        serving.stop(timeout=60)


def raise_prompt(client: httpx.Client, url: str, n: int) -> None:
    body = {"thread_id": f"web:workers{n}", "agent": "ops", "started_by": "web:alice"}
    run = client.post(f"{url}/v1/runs", json=body, headers=AGENT)
    assert run.status_code == 201, run.text
    prompt = client.post(f"{url}/v1/runs/{run.json()['run_id']}/prompts", json=QUESTION, headers=AGENT)
    assert prompt.status_code == 201, prompt.text


def raised_total(text: str) -> float:
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("threadgate_prompts_raised_total{")
    )


def test_two_workers_serve_one_port_count_together_and_stop_together_on_sigterm(
    server: ServeProcess,
) -> None:
    parent = server.running.pid
    pids = pids_serving(server.url)
    assert len(pids) == 2 and parent not in pids
    assert {parent_of(pid) for pid in pids} == {parent}
    [banner] = [line for line in server.log.read_text().splitlines() if line.startswith("Workers:")]
    assert re.fullmatch(r"Workers: 2 \(pids \d+, \d+\)", banner)
    assert {int(pid) for pid in re.findall(r"\d+", banner)[1:]} == pids

    with fresh_client() as client:
        for n in range(6):
            raise_prompt(client, server.url, n)
        scrapes = [client.get(f"{server.url}/metrics").text for _ in range(20)]
    # Each worker counted the raises it served; every scrape, whichever worker answered it, has them all.
    assert {raised_total(text) for text in scrapes} == {6.0}
    assert all("process_cpu_seconds_total" not in text for text in scrapes)

    server.running.send_signal(signal.SIGTERM)
    assert server.running.wait(timeout=60) == 0
    until(lambda: not any(alive(pid) for pid in pids), "both workers gone", timeout=10)
    finished = {line["worker"] for line in events(server, "shutdown.finished")}
    assert finished == {0, 1}
    assert [line["worker"] for line in events(server, "startup.adopted")] == [0]  # one adoption per start


def test_a_worker_killed_with_sigkill_is_reported_and_started_again(server: ServeProcess) -> None:
    first = pids_serving(server.url)
    victim = min(first)
    os.kill(victim, signal.SIGKILL)
    until(lambda: bool(events(server, "serve.worker_exited")), "the exit reported")
    [exited] = events(server, "serve.worker_exited")
    assert (exited["pid"], exited["code"], exited["restarting"]) == (victim, -signal.SIGKILL, True)
    until(lambda: len(events(server, "serve.worker_ready")) == 3, "the new worker ready", START_TIMEOUT_S)
    replacement = pids_serving(server.url, at_least=1, among=first)
    assert len(replacement) == 1 and parent_of(replacement.pop()) == server.running.pid
    assert server.running.poll() is None


def test_workers_stop_by_themselves_when_their_parent_is_killed(server: ServeProcess) -> None:
    pids = pids_serving(server.url)
    environ = Path(f"/proc/{min(pids)}/environ").read_bytes().split(b"\0")
    [shared] = [
        entry.split(b"=", 1)[1].decode() for entry in environ if entry.startswith(METRICS_DIR.encode() + b"=")
    ]
    server.kill()
    shutil.rmtree(shared)  # what the parent would have removed had it stopped
    until(lambda: not any(alive(pid) for pid in pids), "both workers gone", timeout=30)
    assert {line["worker"] for line in events(server, "serve.parent_gone")} == {0, 1}
    assert {line["worker"] for line in events(server, "shutdown.finished")} == {0, 1}
