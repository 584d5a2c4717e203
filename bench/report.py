"""The results as Markdown tables, and as one JSON object."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bench.cluster import ClusterSpread
from bench.hook import HookFigure
from bench.http import HttpFigure
from bench.idle import IdleFigure
from bench.machine import Machine
from bench.resolve import ResolveFigure
from bench.restart import RestartFigure
from bench.roundtrips import RoundTrips
from bench.scale import ScaleFigure
from bench.steady_memory import SteadyMemory

HEADLINE_CONCURRENCY = 16


@dataclass(frozen=True, slots=True)
class Results:
    profile: str
    machine: Machine
    resolve: list[ResolveFigure]
    round_trips: list[RoundTrips]
    scale: ScaleFigure
    http: HttpFigure
    idle: IdleFigure
    http_workers: dict[str, float]  # serve --workers N → HTTP operations per second
    restart: RestartFigure
    cluster: ClusterSpread
    steady: SteadyMemory
    hook: HookFigure

    @property
    def resolve_vs_floor_ratio(self) -> float:
        for figure in self.resolve:
            if figure.concurrency == HEADLINE_CONCURRENCY:
                return round(figure.ratio, 3)
        return 0.0

    @property
    def round_trips_per_resolve(self) -> int | None:
        """A resolve's round trips: the call, and the outbox pass it sets off (figure 2)."""
        trips = next((t for t in self.round_trips if t.operation == "resolve"), None)
        return trips.call + trips.outbox if trips else None

    @property
    def headline(self) -> ResolveFigure | None:
        return next((f for f in self.resolve if f.concurrency == HEADLINE_CONCURRENCY), None)

    def as_dict(self) -> dict[str, Any]:
        headline = self.headline
        return {
            "profile": self.profile,
            "resolve_vs_floor_ratio": self.resolve_vs_floor_ratio,
            # The 16-thread resolve path's own figures, and HTTP's, at the top level beside the ratio.
            "gateway_cpu_us_per_resolve": round(headline.process_cpu_us) if headline else None,
            "resolve_p99_ms": round(headline.gateway.p99_ms, 3) if headline else None,
            "http_vs_floor_ratio": round(self.http.ratio, 3),
            "raise_p50_ms": round(self.http.raise_ms[0], 3),
            "redis_commands_per_resolve": round(headline.redis_commands, 1) if headline else None,
            "round_trips_per_resolve": self.round_trips_per_resolve,
            "resolve": [figure.as_dict() for figure in self.resolve],
            "round_trips": {figure.operation: figure.as_dict() for figure in self.round_trips},
            "scale": self.scale.as_dict(),
            "http": self.http.as_dict(),
            "idle_waiters": self.idle.as_dict(),
            "http_workers": self.http_workers,
            "restart_with_pending": self.restart.as_dict(),
            "cluster_spread": self.cluster.as_dict(),
            "steady_memory": self.steady.as_dict(),
            "hook": self.hook.as_dict(),
            "machine": self.machine.as_dict(),
        }


def _row(*cells: object) -> str:
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def _n(value: float) -> str:
    return f"{value:,.0f}"


def _ms(value: float) -> str:
    return f"{value:.2f}"


def markdown(results: Results) -> str:
    lines = [f"Machine: {results.machine.describe()}", ""]
    lines += [
        "**1. Resolve path in-process** (reply → mapped → resolved → agent's waiter woken → audit queued; "
        "floor: one raw `EVALSHA` of a trivial script per operation, same pool; a raise: a run started and "
        "its prompt raised, 64 at a time, before the window)",
        "",
        _row(
            "threads",
            "resolves/s",
            "p50 ms",
            "p99 ms",
            "floor ops/s",
            "floor p50",
            "floor p99",
            "ratio",
            "CPU µs/resolve: gateway",
            "Redis",
            "CPU µs/raise: gateway",
            "Redis",
            "Redis commands/resolve",
        ),
        _row(*["---"] * 13),
    ]
    for figure in results.resolve:
        gateway, floor = figure.gateway, figure.floor
        lines.append(
            _row(
                figure.concurrency,
                _n(gateway.per_second),
                _ms(gateway.p50_ms),
                _ms(gateway.p99_ms),
                _n(floor.per_second),
                _ms(floor.p50_ms),
                _ms(floor.p99_ms),
                f"{figure.ratio:.3f}",
                _n(figure.process_cpu_us),
                _n(figure.redis_cpu_us),
                _n(figure.raise_process_cpu_us),
                _n(figure.raise_redis_cpu_us),
                f"{figure.redis_commands:.1f}",
            )
        )
    lines += [
        "",
        "**2. Redis round trips per operation** (counted on the connection; warm caches)",
        "",
        _row("operation", "round trips on the call", "outbox drain after it", "commands on the call"),
        _row(*["---"] * 4),
    ]
    for trips in results.round_trips:
        lines.append(_row(trips.operation, trips.call, trips.outbox, " ".join(trips.commands)))
    scale = results.scale
    lines += [
        "",
        f"**3. Scale** (resolve path at {scale.concurrency} threads, beside few and many waiting "
        "prompts, one per thread)",
        "",
        _row("pending prompts", "resolves/s", "p50 ms", "p99 ms"),
        _row(*["---"] * 4),
        _row(_n(scale.few), _n(scale.at_few.per_second), _ms(scale.at_few.p50_ms), _ms(scale.at_few.p99_ms)),
        _row(
            _n(scale.many), _n(scale.at_many.per_second), _ms(scale.at_many.p50_ms), _ms(scale.at_many.p99_ms)
        ),
        "",
        f"p50 ratio many/few: {scale.ratio:.2f}. Redis memory per pending prompt (typical two-question "
        f"prompt): {_n(scale.bytes_per_prompt)} bytes (`INFO memory`); "
        f"per run {_n(scale.bytes_per_run)} bytes. "
        f"`MEMORY USAGE` of one: "
        + ", ".join(f"{name} {size} B" for name, size in scale.sample_keys.items())
        + f". Loading {_n(scale.many - scale.few)} prompts took {scale.load_seconds:.0f} s.",
    ]
    http = results.http
    lines += [
        "",
        f"**4. HTTP, two processes** ({http.concurrency} concurrent agents; an operation is raise + answer "
        "+ long-poll return; the floor is three requests to a bare FastAPI endpoint doing one Redis GET)",
        "",
        _row("", "operations/s", "p50 ms", "p99 ms"),
        _row(*["---"] * 4),
        _row("gateway", _n(http.gateway.per_second), _ms(http.gateway.p50_ms), _ms(http.gateway.p99_ms)),
        _row("floor", _n(http.floor.per_second), _ms(http.floor.p50_ms), _ms(http.floor.p99_ms)),
        "",
        f"Ratio {http.ratio:.2f}. Raise p50/p99 {_ms(http.raise_ms[0])}/{_ms(http.raise_ms[1])} ms; "
        f"answer p50/p99 {_ms(http.answer_ms[0])}/{_ms(http.answer_ms[1])} ms; "
        f"{http.hot} of {http.gateway.ops} answers resolved hot (the long-poll was already waiting).",
    ]
    idle = results.idle
    lines += [
        "",
        f"**5. Idle waiters on one process** ({_n(idle.long_polls)} long-polls "
        f"`GET /v1/prompts/{{id}}?wait=60` and {_n(idle.streams)} event streams `GET /v1/events`; "
        "answers given on another process)",
        "",
        _row("held", "Redis connections", "bytes/waiter (RSS)", "wake p50 ms", "wake p99 ms",
             "GET /v1/prompts p50 ms", "p99 ms", "/readyz"),
        _row(*["---"] * 8),
        _row(_n(idle.held), idle.redis_connections, _n(idle.bytes_per_waiter), _ms(idle.wake_ms[0]),
             _ms(idle.wake_ms[1]), _ms(idle.list_ms[0]), _ms(idle.list_ms[1]), idle.ready_status),
    ]  # fmt: skip
    lines += [
        "",
        f"**6. HTTP through one `threadgate serve --workers N`** (figure 4's operation, agent and operator "
        f"on the one port, {http.concurrency} concurrent agents)",
        "",
        _row("workers", "operations/s"),
        _row(*["---"] * 2),
        *(_row(count, _n(per_second)) for count, per_second in results.http_workers.items()),
    ]
    restart = results.restart
    lines += [
        "",
        f"**7. A restart with {_n(restart.pending)} prompts waiting** (seconds from launching "
        "`threadgate serve`; beside a launch on the empty Redis in the same run)",
        "",
        _row("waiting", "`/readyz` 200", "a raise and its answer done", "adoption done (background)",
             "prompts adopted"),
        _row(*["---"] * 5),
        *(_row(_n(count), f"{start.ready_s:.2f}", f"{start.first_resolve_s:.2f}", f"{start.adopted_s:.1f}",
               _n(start.adopted))
          for count, start in ((0, restart.empty), (restart.pending, restart.loaded))),
    ]  # fmt: skip
    cluster = results.cluster
    lines += [
        "",
        f"**8. Spread over a {cluster.masters}-master Redis Cluster** (figure 1's resolve path, "
        f"{_n(cluster.ops)} resolves at 16 threads; each master's share of the commands, scripts' own "
        "included, and of the CPU, in the timed window)",
        "",
        _row("master", "commands", "CPU ms"),
        _row(*["---"] * 3),
        *(_row(index + 1, _n(calls), f"{cpu * 1000:.1f}")
          for index, (calls, cpu) in enumerate(zip(cluster.commands, cluster.cpu_s, strict=True))),
        "",
        f"Largest share: commands {cluster.max_share_commands:.3f}, CPU {cluster.max_share_cpu:.3f} "
        f"(an even spread: {1 / cluster.masters:.3f}).",
    ]  # fmt: skip
    steady = results.steady
    lines += [
        "",
        f"**9. Steady memory of one process** ({_n(steady.runs)} runs after a warm-up of "
        f"{_n(steady.warmup)}: each raises one to four prompts the agent long-polls, answered through the "
        "API and the web chat (forms a field at a time, one run in ten leaving a form to expire), plus a "
        "chat message; RSS of the `threadgate serve` process)",
        "",
        _row("runs", "prompts", "calls/s", "RSS after warm-up MB", "RSS at the end MB", "KB per 1,000 runs"),
        _row(*["---"] * 6),
        _row(_n(steady.runs), _n(steady.prompts), f"{steady.calls / max(steady.seconds, 1e-9):.0f}",
             f"{steady.rss_start / 2**20:.1f}", f"{steady.rss_end / 2**20:.1f}",
             f"{steady.kb_per_1k_runs:.0f}"),
    ]  # fmt: skip
    hook = results.hook
    lines += [
        "",
        f"**10. A hook a tool call's policy lets through** (`threadgate hook claude` answering a `Read` "
        f"the agent's policy allows, beside `python -c pass` in the same interpreter; median of "
        f"{hook.pairs} paired runs)",
        "",
        _row("hook ms", "python ms", "ratio", "threadgate mcp start-up ms"),
        _row(*["---"] * 4),
        _row(f"{hook.allowed_ms:.1f}", f"{hook.python_ms:.1f}", f"{hook.ratio:.2f}",
             f"{hook.mcp_startup_ms:.0f}"),
    ]  # fmt: skip
    return "\n".join(lines)
