"""Prometheus metrics: one-line calls the core makes as things happen, and gauges read at scrape time.

Under ``serve --workers`` each worker records into files shared through ``PROMETHEUS_MULTIPROC_DIR``
(set by the parent), so whichever worker answers a scrape reports the whole process group.
"""

from __future__ import annotations

import functools
import os
from datetime import datetime
from typing import Any, Protocol

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.multiprocess import MultiProcessCollector

SHARED = bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))  # one of several workers
REGISTRY = CollectorRegistry()
if not SHARED:  # a worker's own CPU and memory, shown as the group's, would mislead
    ProcessCollector(registry=REGISTRY)
    PlatformCollector(registry=REGISTRY)

# People answer in seconds to days; buckets span that range rather than an HTTP latency's.
HOUR, DAY = 3600, 86400
ANSWER_BUCKETS = (1, 5, 15, 30, 60, 120, 300, 900, 1800, HOUR, 4 * HOUR, 12 * HOUR, DAY, 3 * DAY, 7 * DAY)
# How many dirty threads the scrape looks into to count the items they still owe (bounds its cost).
DEPTH_SAMPLE = 1000

PROMPTS_RAISED = Counter(
    "threadgate_prompts_raised", "Prompts raised by agents.", ["kind", "channel"], registry=REGISTRY
)
PROMPTS_ANSWERED = Counter(
    "threadgate_prompts_answered",
    "Prompts answered, by how the answer reached the agent (resolved_hot or resolved_parked).",
    ["kind", "channel", "resolution"],
    registry=REGISTRY,
)
PROMPTS_CANCELLED = Counter(
    "threadgate_prompts_cancelled",
    "Prompts cancelled, by reason_code (run_ended, superseded, declined, expired, ...).",
    ["kind", "channel", "reason"],
    registry=REGISTRY,
)
TIME_TO_ANSWER = Histogram(
    "threadgate_time_to_answer_seconds",
    "From a prompt being raised to it being answered.",
    ["kind", "channel"],
    buckets=ANSWER_BUCKETS,
    registry=REGISTRY,
)
INBOUND = Counter(
    "threadgate_inbound_messages",
    "People's messages and control presses, by outcome (answered, queued, not_allowed, duplicate, stale).",
    ["channel", "outcome"],
    registry=REGISTRY,
)
PLATFORM_ERRORS = Counter(
    "threadgate_platform_errors",
    "Platform API calls that failed; kind is rate_limited (a 429 with a retry time) or failed.",
    ["channel", "kind"],
    registry=REGISTRY,
)
WEBHOOK_DELIVERIES = Counter(
    "threadgate_webhook_deliveries",
    "Webhook delivery attempts, by outcome (delivered, retry_scheduled, given_up).",
    ["outcome"],
    registry=REGISTRY,
)
# Across workers: the streams and leases of the live ones are summed; the queue gauges, read from Redis
# at each scrape, are the latest reading.
OPEN_STREAMS = Gauge(
    "threadgate_open_streams",
    "Event streams and long-polls this process holds open now.",
    registry=REGISTRY,
    multiprocess_mode="livesum",
)
OUTBOX_THREADS = Gauge(
    "threadgate_outbox_threads",
    "Threads whose outbox may still owe a post or an event.",
    registry=REGISTRY,
    multiprocess_mode="mostrecent",
)
OUTBOX_DEPTH = Gauge(
    "threadgate_outbox_depth",
    f"Chat posts and events waiting in outboxes (counted over at most {DEPTH_SAMPLE} threads).",
    registry=REGISTRY,
    multiprocess_mode="mostrecent",
)
WEBHOOK_QUEUE = Gauge(
    "threadgate_webhook_queue",
    "Webhook deliveries waiting or retrying.",
    registry=REGISTRY,
    multiprocess_mode="mostrecent",
)
LEASE_HELD = Gauge(
    "threadgate_lease_held",
    "1 while this process holds the channel's connection lease, else 0.",
    ["channel", "lease"],
    registry=REGISTRY,
    multiprocess_mode="livesum",
)


class CountedPrompt(Protocol):
    """What the counters read of a prompt (``gateway.base.models.Prompt``): metrics import nothing above
    them."""

    @property
    def thread_id(self) -> str: ...
    @property
    def kind(self) -> Any: ...  # a StrEnum: ``.value`` is the label
    @property
    def prompt_state(self) -> str: ...
    @property
    def resolution(self) -> Any: ...
    @property
    def reason_code(self) -> Any: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def settled_at(self) -> datetime | None: ...


def channel_of(thread_id: str) -> str:
    """The platform part of a thread id (``<platform>:<coordinates>`` → ``<platform>``): a bounded label."""
    return thread_id.split(":", 1)[0]


@functools.cache
def _child(metric: Any, *labels: str) -> Any:
    """A metric's labelled child, looked up once per label set (the set of labels is small and bounded)."""
    return metric.labels(*labels)


def prompt_raised(prompt: CountedPrompt) -> None:
    _child(PROMPTS_RAISED, prompt.kind.value, channel_of(prompt.thread_id)).inc()


def prompt_settled(prompt: CountedPrompt) -> None:
    """Count a settled prompt once, by how it settled; an answered one also records its time to answer."""
    kind, channel = prompt.kind.value, channel_of(prompt.thread_id)
    if prompt.prompt_state == "answered":
        resolution = prompt.resolution.value if prompt.resolution else "unknown"
        _child(PROMPTS_ANSWERED, kind, channel, resolution).inc()
        if prompt.settled_at is not None:
            seconds = (prompt.settled_at - prompt.created_at).total_seconds()
            _child(TIME_TO_ANSWER, kind, channel).observe(max(seconds, 0.0))
    elif prompt.prompt_state == "cancelled":
        reason = prompt.reason_code.value if prompt.reason_code else "unknown"
        _child(PROMPTS_CANCELLED, kind, channel, reason).inc()


def inbound(thread_id: str, outcome: str) -> None:
    INBOUND.labels(channel_of(thread_id), str(outcome)).inc()


def platform_error(thread_id: str, error: Any) -> None:
    """Count a failed platform call; ``error`` is a ChannelError (a retry time means rate limited)."""
    kind = "rate_limited" if getattr(error, "retry_after", None) is not None else "failed"
    PLATFORM_ERRORS.labels(channel_of(thread_id), kind).inc()


def webhook_delivery(outcome: str) -> None:
    WEBHOOK_DELIVERIES.labels(outcome).inc()


def lease_held(name: str, held: bool) -> None:
    """Record whether this process holds lease ``name`` (``<platform>:<token digest>``)."""
    LEASE_HELD.labels(channel_of(name), name).set(1 if held else 0)


class QueueSource(Protocol):
    """Where the queue gauges are read from (the store)."""

    async def queue_depths(self, sample: int) -> tuple[int, int, int]:
        """Threads with outbox work, items owed by the first ``sample`` of them, webhooks waiting."""
        ...


async def refresh(source: QueueSource) -> None:
    """Read the gauges that live in the store (outbox and webhook queue depth) just before a scrape."""
    threads, depth, webhooks = await source.queue_depths(DEPTH_SAMPLE)
    OUTBOX_THREADS.set(threads)
    OUTBOX_DEPTH.set(depth)
    WEBHOOK_QUEUE.set(webhooks)


def render() -> tuple[bytes, str]:
    """The exposition text and its content type: under ``serve --workers``, of every worker together."""
    if not SHARED:
        return generate_latest(REGISTRY), CONTENT_TYPE_LATEST
    group = CollectorRegistry()
    MultiProcessCollector(group)  # type: ignore[no-untyped-call]
    return generate_latest(group), CONTENT_TYPE_LATEST
