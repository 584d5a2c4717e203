"""Chaos: redis-server killed with -9 under traffic, then back from its AOF, then back empty.

``threadgate serve`` keeps running throughout. While Redis is away every call answers 503
STORE_UNAVAILABLE with ``Retry-After`` (never a 500) and ``/readyz`` says 503; the outage is logged once.
When Redis returns, the API, long-polls, the event stream, webhooks and the web chat work again without
a restart, and with the AOF (fsync always) no answer the client was told was accepted is lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import Counter
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.test_webhooks import SECRET, Receiver, receiving
from tests.support.redis_server import RedisServer, killable_redis
from tests.support.serve import ServeProcess, serve_env

pytestmark = [pytest.mark.slow, pytest.mark.redis]

AGENT = {"Authorization": "Bearer agent-token"}
OPERATOR = {"Authorization": "Bearer operator-token"}
QUESTION = {"kind": "text", "questions": [{"question": "Which branch should I deploy?"}]}
STARTER = "web:alice"


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisServer]:
    server = killable_redis(tmp_path / "redis")
    yield server
    server.stop()


async def until(condition: Callable[[], bool], what: str, timeout: float = 15.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


@dataclass
class Traffic:
    """Stories (start a run, raise a prompt, answer it over REST or the web chat) told over and over;
    each call retried while it answers 503. Every status seen is counted; answers the gateway accepted
    are kept with the Redis "epoch" they were given in (a restart from empty begins a new one)."""

    client: httpx.AsyncClient
    base: str
    epoch: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    unavailable: list[httpx.Response] = field(default_factory=list)
    accepted: list[tuple[int, str, str]] = field(default_factory=list)  # (epoch, prompt id, answer)
    stories: int = 0

    def accepted_in(self, epoch: int) -> int:
        return sum(1 for story_epoch, _, _ in self.accepted if story_epoch == epoch)

    async def call(self, method: str, path: str, **kwargs: Any) -> httpx.Response | None:
        """The first answer that is not a 503; None when the story should start over."""
        for _ in range(400):
            response = await self.client.request(method, f"{self.base}{path}", **kwargs)
            self.statuses[response.status_code] += 1
            if response.status_code != 503:
                return None if response.status_code == 404 else response  # gone with an empty Redis
            self.unavailable.append(response)
            await asyncio.sleep(0.05)
        raise AssertionError(f"{method} {path} answered 503 for too long")

    async def story(self, n: int) -> None:
        epoch = self.epoch
        thread = f"web:chaos{n}"
        body = {"thread_id": thread, "agent": "ops", "started_by": STARTER}
        run = await self.call("POST", "/v1/runs", headers=AGENT, json=body)
        if run is None:
            return
        assert run.status_code == 201, run.text
        raised = await self.call(
            "POST", f"/v1/runs/{run.json()['run_id']}/prompts", headers=AGENT, json=QUESTION
        )
        if raised is None or raised.status_code == 409:  # the run was lost with an empty Redis
            return
        assert raised.status_code == 201, raised.text
        prompt_id, answer = raised.json()["prompt_id"], f"release-{n}"
        if n % 2:
            path, message = (
                f"/chat/chaos{n}/messages",
                {"name": "alice", "text": answer, "client_id": f"c{n}"},
            )
            reply = await self.call("POST", path, json=message)
            if reply is not None and reply.status_code == 202 and reply.json()["outcome"] == "answered":
                self.accepted.append((epoch, prompt_id, answer))
        else:
            accept = {"action": "accept", "content": answer, "from": STARTER}
            reply = await self.call(
                "POST", f"/v1/agents/ops/inputs/{prompt_id}", headers=OPERATOR, json=accept
            )
            if reply is not None and reply.status_code == 200:
                self.accepted.append((epoch, prompt_id, answer))
        self.stories += 1

    async def run(self) -> None:
        n = 0
        while True:
            await asyncio.gather(*(self.story(n + k) for k in range(3)))
            n += 3


@dataclass
class EventFollower:
    """Follows ``/v1/events`` as a browser's EventSource would: reconnects with ``Last-Event-ID``."""

    client: httpx.AsyncClient
    base: str
    seen: set[str] = field(default_factory=set)
    last_id: str | None = None
    connections: int = 0

    async def run(self) -> None:
        while True:
            headers = {**AGENT, **({"Last-Event-ID": self.last_id} if self.last_id else {})}
            with contextlib.suppress(httpx.HTTPError):
                async with self.client.stream("GET", f"{self.base}/v1/events", headers=headers) as response:
                    if response.status_code == 200:
                        self.connections += 1
                        async for line in response.aiter_lines():
                            if line.startswith("id: "):
                                self.last_id = line[4:]
                            elif line.startswith("data: "):
                                self.seen.add(json.loads(line[6:])["id"])
            await asyncio.sleep(0.1)  # the stream's own `retry` hint is 2 s; a test need not wait that long


@contextlib.asynccontextmanager
async def background(*jobs: Callable[[], Coroutine[Any, Any, None]]) -> AsyncIterator[None]:
    """Run ``jobs`` during the block; a job's own failure is raised (it is the cause of any timeout)."""
    tasks = [asyncio.create_task(job()) for job in jobs]
    try:
        yield
    finally:
        failed = [task.exception() for task in tasks if task.done() and not task.cancelled()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for exc in failed:
            if exc is not None:
                raise exc


async def readyz(client: httpx.AsyncClient, base: str) -> int:
    try:
        return (await client.get(f"{base}/readyz", timeout=3)).status_code
    except httpx.HTTPError:
        return 0


async def check_everything_resumes(
    client: httpx.AsyncClient, base: str, receiver: Receiver, follower: EventFollower, tag: str
) -> None:
    """A new prompt reaches the event stream and the webhook; a long-poll on it sees the web chat answer."""
    run = await client.post(
        f"{base}/v1/runs",
        headers=AGENT,
        json={"thread_id": f"web:{tag}", "agent": "ops", "started_by": STARTER},
    )
    assert run.status_code == 201, run.text
    raised = await client.post(f"{base}/v1/runs/{run.json()['run_id']}/prompts", headers=AGENT, json=QUESTION)
    assert raised.status_code == 201, raised.text
    prompt_id = raised.json()["prompt_id"]
    long_poll = asyncio.create_task(
        client.get(f"{base}/v1/prompts/{prompt_id}", params={"wait": 15}, headers=AGENT, timeout=30)
    )
    await until(lambda: f"{prompt_id}.requested" in follower.seen, "the event stream")
    await until(lambda: f"{prompt_id}.requested" in receiver.ids(), "the webhook")
    answer = await client.post(f"{base}/chat/{tag}/messages", json={"name": "alice", "text": "main"})
    assert answer.status_code == 202, answer.text
    assert answer.json()["outcome"] == "answered", answer.text
    settled = await long_poll
    assert (settled.status_code, settled.json()["prompt_state"]) == (200, "answered"), settled.text


async def kill_and_see_503(
    redis: RedisServer, client: httpx.AsyncClient, base: str, traffic: Traffic
) -> None:
    seen = len(traffic.unavailable)
    redis.kill()
    await until(lambda: len(traffic.unavailable) > seen, "a 503 under traffic")
    response = traffic.unavailable[-1]
    assert response.headers["Retry-After"] == "2"
    assert response.json()["error"]["code"] == "STORE_UNAVAILABLE"
    assert response.json()["error"]["details"] == {"retry_after": 2}
    assert await readyz(client, base) == 503


async def test_redis_killed_under_traffic_then_back_from_aof_and_empty(
    redis: RedisServer, tmp_path: Path
) -> None:
    receiver = Receiver()
    async with receiving(receiver) as hook_url, httpx.AsyncClient(timeout=20) as client:
        env = serve_env(
            REDIS_URL=redis.url,
            THREADGATE_API_TOKENS="agent:agent:agent-token:ops,ops:operator:operator-token",
            THREADGATE_WEB_CHAT="open",
            # The traffic posts as alice from one address without pause; the web chat's flood limits
            # are not what this test is about, so they sit well above what it sends.
            THREADGATE_WEB_POSTS_PER_NAME="100000",
            THREADGATE_WEB_POSTS_PER_CLIENT="100000",
            THREADGATE_WEBHOOKS=hook_url,
            THREADGATE_WEBHOOK_SECRET=SECRET,
            THREADGATE_LOG_LEVEL="INFO",
        )
        server = ServeProcess(env, tmp_path, name="gateway")
        await asyncio.to_thread(server.start, "/readyz")
        base = server.url
        traffic = Traffic(client, base)
        follower = EventFollower(client, base)
        try:
            async with background(traffic.run, follower.run):
                await until(lambda: follower.connections > 0 and traffic.accepted_in(0) >= 3, "traffic")

                # (a) killed, then back from its AOF on the same port.
                await kill_and_see_503(redis, client, base, traffic)
                redis.start()
                await until(lambda: traffic.accepted_in(0) >= 9, "traffic after the restart from AOF")
                assert await readyz(client, base) == 200
                await check_everything_resumes(client, base, receiver, follower, "after-aof")
                # No answer the client was told was accepted went missing across the restart.
                for _epoch, prompt_id, answer in list(traffic.accepted):
                    prompt = (await client.get(f"{base}/v1/prompts/{prompt_id}", headers=AGENT)).json()
                    assert prompt["prompt_state"] == "answered", prompt
                    assert prompt["answers"][0]["answer"] == [answer], prompt

                # (b) killed, then back empty.
                await kill_and_see_503(redis, client, base, traffic)
                traffic.epoch = 1
                redis.restart_empty()
                await until(lambda: traffic.accepted_in(1) >= 6, "traffic after the restart from empty")
                assert await readyz(client, base) == 200
                await check_everything_resumes(client, base, receiver, follower, "after-empty")
        finally:
            server.stop()

    assert not [status for status in traffic.statuses if status >= 500 and status != 503], traffic.statuses
    log = (tmp_path / "gateway.log").read_text()
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    names = [line["event"] for line in lines]
    assert names.count("store.unavailable") == 2, names.count("store.unavailable")
    assert names.count("store.recovered") == 2
    assert "webhooks.group_recreated" in names
    assert "Traceback" not in log
    assert "never retrieved" not in log
