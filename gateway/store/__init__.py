"""The Redis store: keys hash-tagged by thread, one Lua script per state change.

``Store`` is what the rest of the gateway holds. Its methods are written in one module per job, each a
class over the shared ``base.StoreBase`` (the client, the scripts, the settings and the process's bounded
caches), and ``Store`` inherits them all (``store.py``): mixins rather than composition, so a caller's
``store.resolve(...)`` and every public method stay where they were, and a test's or a part's call to
another part's method needs no delegating wrapper. The parts:

- ``runs``: start, read and end a run; who a thread belongs to.
- ``prompts``: open, read and settle (answer, cancel, expire) a prompt; watch marks, admission, drafts.
- ``threads``: a person's message decided in one step (``receive``); the thread's item log.
- ``inbox``: the partitioned indexes of pending prompts, paged, counted and pruned.
- ``outboxes``: the dirty sets and the passes that drain a thread's outbox under its lock.
- ``feeds``: appending to, trimming and reading the event, message and history feeds.
- ``agents``: agents' definitions and approvers; rate-limit counters.
- ``grants``, ``session_runs``, ``escalations``, ``owners``: held by the store as attributes
  (``store.grants`` ...), over the same client and scripts.

Each Lua script's KEYS and ARGV are laid out in one function of ``calls`` (named after the script), from
named values; a script's reply is decoded once, next to the part that calls it, into a typed result
(``results``). Key names live in ``keys``: a script is handed every key it can know before it runs.
"""

from gateway.store.connection import Connection, connect, redact_url, trim_idle
from gateway.store.results import (
    Decision,
    FeedEntry,
    Kept,
    OutboxBatch,
    OutboxPass,
    ReadyAnswer,
    Refusal,
    Settlement,
)
from gateway.store.store import Store

__all__ = [
    "Connection",
    "Decision",
    "FeedEntry",
    "Kept",
    "OutboxBatch",
    "OutboxPass",
    "ReadyAnswer",
    "Refusal",
    "Settlement",
    "Store",
    "connect",
    "redact_url",
    "trim_idle",
]
