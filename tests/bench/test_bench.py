"""The benchmark's machinery: round trips are counted on the wire, and a run ends in one JSON line."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from bench.counting import TALLY, count_round_trips
from bench.resolve import measure_gateway
from bench.roundtrips import round_trip_figures
from bench.stats import Summary, percentile
from bench.workload import running_gateway
from tests.support.redis_server import RedisServer

ROOT = Path(__file__).resolve().parents[2]


async def test_a_command_or_a_whole_pipeline_is_one_round_trip(redis_server: RedisServer) -> None:
    client = aioredis.Redis.from_url(redis_server.url, decode_responses=True)
    count_round_trips(client)
    try:
        await client.ping()  # the connection's own handshake is not part of what is measured
        TALLY.reset()
        await client.set("bench:k", "v")
        pipe = client.pipeline(transaction=False)
        pipe.get("bench:k")
        pipe.incr("bench:n")
        pipe.delete("bench:k", "bench:n")
        await pipe.execute()
        assert TALLY.round_trips["call"] == 2
        assert TALLY.commands["call"] == ["SET", "GET", "INCRBY", "DEL"]
    finally:
        await client.aclose()


async def test_round_trips_of_an_outbox_drain_are_booked_to_the_outbox(redis_server: RedisServer) -> None:
    client = aioredis.Redis.from_url(redis_server.url, decode_responses=True)
    count_round_trips(client)
    try:
        await client.ping()
        TALLY.reset()
        await asyncio.create_task(client.get("bench:k"), name="threadgate.outbox.slack:C1:1.2")
        await client.get("bench:k")
        assert TALLY.round_trips == {"outbox": 1, "call": 1}
    finally:
        await client.aclose()


def test_percentiles_are_nearest_rank() -> None:
    values = [float(n) for n in range(1, 101)]
    assert percentile(values, 50) == 50.0
    assert percentile(values, 99) == 99.0
    assert percentile([], 99) == 0.0
    summary = Summary.of([0.001, 0.003], seconds=0.5)
    assert summary.per_second == 4.0
    assert summary.p99_ms == pytest.approx(3.0)


@pytest.mark.slow
def test_a_smoke_run_ends_with_one_json_line_carrying_the_headline_ratio() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--profile", "smoke", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=480,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    last = json.loads(done.stdout.strip().splitlines()[-1])
    assert last["profile"] == "smoke"
    assert 0 < last["resolve_vs_floor_ratio"] < 10
    assert last["round_trips"]["resolve"]["call"] >= 1
    assert last["round_trips_per_resolve"] >= 2  # the call and its outbox pass
    assert last["redis_commands_per_resolve"] > 1  # the scripts' own commands counted
    assert last["scale"]["bytes_per_pending_prompt"] > 1000  # the prompts were written, record and all
    assert last["scale"]["memory_usage_sample"]["prompt record"] > 0
    assert last["http"]["gateway"]["ops"] == 12
    idle = last["idle_waiters"]
    assert idle["count"] >= 239 and idle["redis_connections"] <= 8 and idle["wake_p99_ms"] > 0
    assert set(last["http_workers"]) == {"1", "2"} and all(v > 0 for v in last["http_workers"].values())
    restart = last["restart_with_pending"]
    assert restart["pending"] == 200 and restart["adopted"] >= 200
    assert 0 < restart["ready_s"] <= restart["first_resolve_s"]
    spread = last["cluster_spread"]
    assert spread["masters"] == 3 and sum(spread["commands_per_master"]) > 64
    assert 1 / 3 <= spread["max_share_commands"] <= 1 and 1 / 3 <= spread["max_share_cpu"] <= 1
    steady = last["steady_memory"]
    assert steady["runs"] == 24 and steady["prompts"] >= 24 and steady["rss_end_mb"] > 0
    hook = last["hook"]
    assert hook["pairs"] == 2 and hook["allowed_ms"] > 0 and hook["ratio"] > 0 and hook["mcp_startup_ms"] > 0
    assert "| threads | resolves/s |" in done.stdout and "| workers | operations/s |" in done.stdout


async def test_a_resolve_costs_its_call_and_one_outbox_round_trip(redis_server: RedisServer) -> None:
    """The audit post's pass publishes the events in the round trip that acknowledges them."""
    figures = {figure.operation: figure for figure in await round_trip_figures(redis_server.url)}
    assert (figures["resolve"].call, figures["resolve"].outbox) == (1, 1)


async def test_a_resolve_runs_fewer_than_fifty_redis_commands(redis_server: RedisServer) -> None:
    """Scripts' own commands included (58 before they read the thread's state once per call)."""
    async with running_gateway(redis_server.url, counted=False) as gateway:
        await measure_gateway(gateway, 1, 4)
        measured = await measure_gateway(gateway, 1, 20)
    assert 20 < measured.redis_commands < 50
