"""The ``Store``: every part of the Redis store, by job, as one object the rest of the gateway holds."""

from __future__ import annotations

from gateway.store.agents import Agents
from gateway.store.feeds import Feeds
from gateway.store.inbox import Inbox
from gateway.store.outboxes import Outboxes
from gateway.store.prompts import Prompts
from gateway.store.runs import Runs
from gateway.store.threads import Threads


class Store(Runs, Prompts, Threads, Inbox, Outboxes, Feeds, Agents):
    """Prompts, runs, agents, outboxes and feeds in Redis.

    Each base is one job's methods (see the package docstring); they share one ``StoreBase`` (the client,
    the scripts, the settings and the caches), so a method of one part may call another part's."""
