"""Figure 7: a restart with many waiting prompts. How soon a freshly started ``threadgate serve`` answers
``/readyz`` 200, and raises and resolves a prompt of its own, while it adopts the waiting ones.

The waiting prompts are written by a Lua loop inside the bench's Redis, key for key what a raise writes
(the run as ``start_run.lua`` leaves it, the indexes that precede ``open_prompt.lua``, then what that
script writes, plus the message reference a post records), a couple of thousand per call, with no model
validation or id generation in Python. The loop names undeclared keys, so it runs only on a single Redis
server, which is what the bench starts.
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import redis.asyncio as aioredis

from bench.http import AGENT, READY, STARTER, _call, checkout_env
from bench.redis_proc import free_port
from bench.workload import TYPICAL_PROMPT, typical_request
from gateway.base.models import Prompt, from_ms
from gateway.store import keys
from gateway.store.codec import prompt_record

FILL_BATCH = 2000  # prompts per script call: Redis stays responsive between calls
EXPIRES_IN_MS = 7 * 24 * 3600 * 1000
RETAIN_MS = 30 * 24 * 3600 * 1000
RUN_KEEP_MS = RETAIN_MS + 365 * 24 * 3600 * 1000
PLACEHOLDER_PROMPT = "prm_00000000000000000000000000"
PLACEHOLDER_RUN = "run_00000000000000000000000000"
PLACEHOLDER_THREAD = "web:restartplaceholder"
START_TIMEOUT_S = 60.0
ADOPT_TIMEOUT_S = 900.0

FILL = """
local first, count, now, exp = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])
local keep, run_keep, agent, starter = ARGV[5], ARGV[6], ARGV[7], ARGV[8]
local record, record_ids = cjson.decode(ARGV[9]), ARGV[10]
local run_record, run_record_ids = cjson.decode(ARGV[11]), ARGV[12]
local thread_keep = exp - tonumber(now) + tonumber(ARGV[13])
-- Each prompt's partition (computed by the caller: CRC-32 of its thread id), and the partitions' prefixes.
local parts, prefixes = cjson.decode(ARGV[14]), cjson.decode(ARGV[15])
-- A template's literal pieces with an id between each two: 'p' the prompt's, 'r' the run's, 't' the thread.
local function fill_in(pieces, ids, values)
  local out = {pieces[1]}
  for j = 1, #ids do
    out[#out + 1] = values[string.sub(ids, j, j)]
    out[#out + 1] = pieces[j + 1]
  end
  return table.concat(out)
end
for i = first, first + count - 1 do
  local n = string.format('%026d', i)
  local pid, rid, thread = 'prm_' .. n, 'run_' .. n, 'web:restart' .. i
  local ids = {p = pid, r = rid, t = thread}
  local P = 'tg:{' .. thread .. '}:'
  redis.call('SET', 'tg:ridx:' .. rid, thread, 'PX', run_keep)
  redis.call('HSET', P .. 'run:' .. rid, 'rec', fill_in(run_record, run_record_ids, ids), 'state', 'running')
  redis.call('PEXPIRE', P .. 'run:' .. rid, run_keep)
  redis.call('SADD', P .. 'agents', agent)
  redis.call('SADD', P .. 'starters', starter)
  redis.call('SET', 'tg:pidx:' .. pid, thread, 'PX', keep)
  local Q = prefixes[parts[i - first + 1] + 1]
  redis.call('ZADD', Q .. 'expiry', exp, pid)
  redis.call('ZADD', Q .. 'pending', now, pid)
  redis.call('ZADD', Q .. 'pending:' .. agent, now, pid)
  redis.call('SET', P .. 'r:' .. pid, fill_in(record, record_ids, ids), 'PX', keep)
  redis.call('HSET', P .. 'p:' .. pid, 'state', 'pending', 'run', rid, 'exp', exp, 'msg', 'm' .. i)
  redis.call('PEXPIRE', P .. 'p:' .. pid, keep)
  redis.call('SET', P .. 'active', pid)
  redis.call('PEXPIRE', P .. 'agents', thread_keep)
  redis.call('PEXPIRE', P .. 'starters', thread_keep)
end
return count
"""


@dataclass(frozen=True, slots=True)
class Start:
    """One fresh ``threadgate serve``, in seconds from launching it."""

    ready_s: float  # /readyz answered 200
    first_resolve_s: float  # a prompt raised and answered through its API
    adopted_s: float  # its startup.adopted log line was written (adoption runs in the background)
    adopted: int  # the pending prompts it counted


@dataclass(frozen=True, slots=True)
class RestartFigure:
    """A start on ``pending`` waiting prompts, beside a start on an empty Redis in the same run (what
    starting Python and the gateway costs on this machine now, whatever is waiting)."""

    pending: int
    fill_s: float
    loaded: Start
    empty: Start

    def as_dict(self) -> dict[str, Any]:
        return {
            "pending": self.pending,
            "ready_s": round(self.loaded.ready_s, 3),
            "first_resolve_s": round(self.loaded.first_resolve_s, 3),
            "adopted_s": round(self.loaded.adopted_s, 1),
            "adopted": self.loaded.adopted,
            "empty_ready_s": round(self.empty.ready_s, 3),
            "empty_first_resolve_s": round(self.empty.first_resolve_s, 3),
            "fill_s": round(self.fill_s, 1),
        }


PLACEHOLDERS = {PLACEHOLDER_PROMPT: "p", PLACEHOLDER_RUN: "r", PLACEHOLDER_THREAD: "t"}


def _template(text: str) -> tuple[str, str]:
    """``text`` split at its placeholder ids, for the loop to fill in: its literal pieces (JSON) and which
    id goes between each two (``p``, ``r``, ``t``)."""
    parts = re.split(f"({'|'.join(map(re.escape, PLACEHOLDERS))})", text)
    return json.dumps(parts[0::2]), "".join(PLACEHOLDERS[part] for part in parts[1::2])


def _records(now_ms: int) -> tuple[str, str]:
    """A typical prompt's stored record and its run's, with placeholder ids the loop replaces."""
    prompt = Prompt(
        prompt_id=PLACEHOLDER_PROMPT,
        run_id=PLACEHOLDER_RUN,
        thread_id=PLACEHOLDER_THREAD,
        agent=AGENT,
        kind=typical_request().kind,
        questions=typical_request().questions,
        created_at=from_ms(now_ms),
        expires_at=from_ms(now_ms + EXPIRES_IN_MS),
        started_by=STARTER,
    )
    run = json.dumps(
        {
            "run_id": PLACEHOLDER_RUN,
            "thread_id": PLACEHOLDER_THREAD,
            "agent": AGENT,
            "started_by": STARTER,
            "state": "running",
            "created_at": from_ms(now_ms).isoformat(),
        },
        separators=(",", ":"),
    )
    return prompt_record(prompt), run


async def fill(url: str, count: int) -> float:
    """Write ``count`` waiting prompts, one per thread and run; the seconds it took."""
    client = aioredis.Redis.from_url(url, decode_responses=True)
    began = time.perf_counter()
    try:
        now_ms = int(time.time() * 1000)
        record, run = (_template(text) for text in _records(now_ms))
        sha = await client.script_load(FILL)
        prefixes = json.dumps([keys.partition_prefix(part) for part in range(keys.PARTITIONS)])
        for first in range(1, count + 1, FILL_BATCH):
            size = min(FILL_BATCH, count + 1 - first)
            parts = json.dumps([keys.partition(f"web:restart{i}") for i in range(first, first + size)])
            args = [first, size, now_ms, now_ms + EXPIRES_IN_MS, EXPIRES_IN_MS + RETAIN_MS, RUN_KEEP_MS]
            await client.evalsha(sha, 0, *args, AGENT, STARTER, *record, *run, RETAIN_MS, parts, prefixes)
        pending = sum([int(await client.zcard(keys.pending_index(part))) for part in keys.EVERY_PARTITION])
        if pending != count:
            raise RuntimeError(f"{pending} prompts are pending after writing {count}")
    finally:
        await client.aclose()
    return time.perf_counter() - began


def _adoption(log: Path) -> dict[str, Any] | None:
    """The process's ``startup.adopted`` log line, once written."""
    for line in log.read_text(errors="replace").splitlines():
        if '"startup.adopted"' in line:
            found: dict[str, Any] = json.loads(line)
            return found
    return None


async def _until_ready(client: aiohttp.ClientSession, process: asyncio.subprocess.Process, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if process.returncode is not None:
            raise RuntimeError(f"threadgate serve exited at start: see {log}")
        try:
            async with client.get(READY) as response:
                if response.status == 200:
                    return
        except aiohttp.ClientError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"threadgate serve did not get ready: see {log}")
        await asyncio.sleep(0.02)


async def restart_figure(url: str, pending: int) -> RestartFigure:
    """Time a fresh ``threadgate serve`` on the empty Redis, then fill it with ``pending`` waiting prompts
    and time another."""
    empty = await time_start(url)
    fill_s = await fill(url, pending)
    return RestartFigure(pending, fill_s, await time_start(url), empty)


async def time_start(url: str) -> Start:
    """Launch ``threadgate serve`` on ``url``; time its readiness, a raise and answer, and its adoption."""
    agent_token, operator_token = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    env = {
        "REDIS_URL": url,
        "THREADGATE_WEB_CHAT": "open",
        "THREADGATE_API_TOKENS": (
            f"bench-agent:agent:{agent_token}:{AGENT},bench-operator:operator:{operator_token}"
        ),
    }
    port = free_port()
    workdir = Path(tempfile.mkdtemp(prefix="threadgate-bench-restart-"))
    log = workdir / "server.log"
    with log.open("wb") as out:
        began = time.perf_counter()
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "gateway.cli", "serve", "--port", str(port),
            cwd=workdir, env=checkout_env(env), stdout=out, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        async with (
            aiohttp.ClientSession(base_url=base) as client,
            aiohttp.ClientSession(base_url=base, headers={"Authorization": f"Bearer {agent_token}"}) as agent,
            aiohttp.ClientSession(
                base_url=base, headers={"Authorization": f"Bearer {operator_token}"}
            ) as operator,
        ):
            await _until_ready(client, process, log)
            ready_s = time.perf_counter() - began
            thread = f"web:restart-probe-{port}"
            body = {"thread_id": thread, "agent": AGENT, "started_by": STARTER}
            run_id = (await _call(agent, "POST", "/v1/runs", 201, json=body))["run_id"]
            path = f"/v1/runs/{run_id}/prompts"
            prompt_id = (await _call(agent, "POST", path, 201, json=TYPICAL_PROMPT))["prompt_id"]
            answer = {"action": "accept", "content": "1", "from": STARTER}
            await _call(operator, "POST", f"/v1/agents/{AGENT}/inputs/{prompt_id}", 200, json=answer)
            first_resolve_s = time.perf_counter() - began
        deadline = time.monotonic() + ADOPT_TIMEOUT_S
        while (adopted := _adoption(log)) is None:
            if process.returncode is not None or time.monotonic() > deadline:
                raise RuntimeError(f"threadgate serve did not finish adopting: see {log}")
            await asyncio.sleep(0.1)
        adopted_s = time.perf_counter() - began
        return Start(ready_s, first_resolve_s, adopted_s, int(adopted.get("pending", 0)))
    finally:
        if process.returncode is None:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), timeout=30)
            except TimeoutError:
                process.kill()
                await process.wait()
        shutil.rmtree(workdir, ignore_errors=True)
