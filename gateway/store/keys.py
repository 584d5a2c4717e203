"""Redis key names. A thread's keys share the hash tag ``{<thread_id>}``: one Cluster slot per thread."""

from __future__ import annotations

# The global indexes and feeds are split into partitions by the thread's hash (gateway.base.partitions).
from gateway.base.partitions import EVERY_PARTITION as EVERY_PARTITION
from gateway.base.partitions import LEGACY as LEGACY
from gateway.base.partitions import PARTITION_TAGS as PARTITION_TAGS
from gateway.base.partitions import PARTITIONS as PARTITIONS
from gateway.base.partitions import partition as partition

PENDING = "tg:pending"  # zset: pending prompt ids by creation time (the inbox)
EXPIRY = "tg:expiry"  # zset: pending prompt ids by expiry time
ESCALATION = "tg:escalation"  # zset: "<prompt id>:<step>" escalation steps by when they are due
DIRTY = "tg:dirty"  # zset: threads whose outbox may hold work, by when it was marked
MESSAGES = "tg:messages"  # stream: people's messages queued for agents
EVENTS = "tg:events"  # stream: input.requested / input.resolved / message.received
HISTORY = "tg:history"  # stream: one record per settled prompt, kept for the audit (gateway.decision.history)
SETTLED_CHANNEL = "tg:settled"  # pub/sub: "<prompt id> <how it settled>", published when it settles
CLAIMS = "tg:claims"  # hash: agent -> JSON list of the channels its definition claims
# One hash tag: the webhook queue's keys share a Cluster slot, so one script can touch them all.
WEBHOOK_PREFIX = "tg:{wh}:"
WEBHOOK_DUE = f"{WEBHOOK_PREFIX}due"  # zset: webhook deliveries by when they are due
WEBHOOK_GROUP = "threadgate-webhooks"  # the consumer group that takes events off EVENTS for webhooks


def partition_prefix(part: int) -> str:
    """The prefix of every key of partition ``part`` (0 to PARTITIONS - 1): its hash tag in braces."""
    return f"tg:part:{{{PARTITION_TAGS[part]}}}:"


def _partitioned(part: int, name: str, legacy: str) -> str:
    return legacy if part == LEGACY else f"{partition_prefix(part)}{name}"


def pending_index(part: int) -> str:
    """A zset: a partition's pending prompt ids by creation time (the inbox)."""
    return _partitioned(part, "pending", PENDING)


def expiry_index(part: int) -> str:
    """A zset: a partition's pending prompt ids by expiry time."""
    return _partitioned(part, "expiry", EXPIRY)


def escalation_schedule(part: int) -> str:
    """A zset: a partition's escalation steps ("<prompt id>:<step>") by when they are due."""
    return _partitioned(part, "escalation", ESCALATION)


def dirty_threads(part: int) -> str:
    """A zset: a partition's threads whose outbox may hold work, by when each was marked."""
    return _partitioned(part, "dirty", DIRTY)


def events_feed(part: int) -> str:
    """A stream: a partition's events (input.requested, input.resolved, message.received, ...)."""
    return _partitioned(part, "events", EVENTS)


def messages_feed(part: int) -> str:
    """A stream: a partition's people's messages queued for agents."""
    return _partitioned(part, "messages", MESSAGES)


def history_feed(part: int) -> str:
    """A stream: a partition's history records (one per settled prompt, one per grant use)."""
    return _partitioned(part, "history", HISTORY)


def is_history(stream: str) -> bool:
    """Whether ``stream`` is a partition of the history (which keeps its own bounds), or its legacy key."""
    return stream == HISTORY or stream.endswith("}:history")


def thread_prefix(thread_id: str) -> str:
    """The prefix of every key of one thread; the braces make it a Cluster hash tag."""
    return f"tg:{{{thread_id}}}:"


# What follows the prefix in a thread's keys, spelled here only: the functions below build the keys from
# them, and ``scripts.py`` writes the same tables into ``_lib.lua`` (``K``, and ``ID`` for the keys of one
# prompt or run, whose id follows), for the keys a script finds while it runs (the active prompt's ...).
THREAD_KEYS = {
    "active": "active",  # the thread's active prompt id
    "items": "items",  # the item log (a stream)
    "agents": "agents",
    "starters": "starters",
    "session": "session",
    "keep": "keep",
    "chat": "chat",  # the outbox's chat posts (a list)
    "pub": "pub",  # the outbox's events (a list)
    "lock": "lock",  # the outbox's lock
    "mirrors": "mirrors",
    "mirror": "mirror",
    "admit": "admit",
}
ID_KEYS = {
    "prompt": "p:",
    "record": "r:",
    "escalation": "e:",
    "watch": "w:",
    "drafts": "pd:",
    "draft": "draft:",
    "run": "run:",
    "grants": "grants:",
    "seen": "d:",
    "session_run": "session-run:",
}


def _own(thread_id: str, name: str) -> str:
    return f"{thread_prefix(thread_id)}{THREAD_KEYS[name]}"


def _of(thread_id: str, kind: str, ident: str) -> str:
    return f"{thread_prefix(thread_id)}{ID_KEYS[kind]}{ident}"


def prompt(thread_id: str, prompt_id: str) -> str:
    """A prompt's small fields (state, run, expiry, how it settled): a hash."""
    return _of(thread_id, "prompt", prompt_id)


def prompt_record(thread_id: str, prompt_id: str) -> str:
    """A prompt's immutable record (its JSON), apart from its hash so the hash stays a compact listpack."""
    return _of(thread_id, "record", prompt_id)


def escalation(thread_id: str, prompt_id: str) -> str:
    """A hash: the escalation steps a prompt took (``s:<step>`` -> when) and the copies they posted
    (``c:<step>:<target>`` -> "<thread id> <message id>")."""
    return _of(thread_id, "escalation", prompt_id)


def mirrors(thread_id: str) -> str:
    """A hash: prompt id -> its own thread, for each copy of another thread's prompt posted here."""
    return _own(thread_id, "mirrors")


def mirror(thread_id: str) -> str:
    """The prompt of the latest copy posted here: a reply typed while the thread has no prompt answers it."""
    return _own(thread_id, "mirror")


def run(thread_id: str, run_id: str) -> str:
    return _of(thread_id, "run", run_id)


def grants(thread_id: str, run_id: str) -> str:
    """A hash: a run's grants (``g:<id>`` the record, ``u:<id>`` its uses); deleted when the run ends."""
    return _of(thread_id, "grants", run_id)


def thread_agents(thread_id: str) -> str:
    """A set: the agents with a run in the thread (they own it)."""
    return _own(thread_id, "agents")


def thread_starters(thread_id: str) -> str:
    """A set: the identities that started a run in the thread (they may read it)."""
    return _own(thread_id, "starters")


def thread_session(thread_id: str) -> str:
    """The session key whose thread this is, if an agent session started it (approvers read it only)."""
    return _own(thread_id, "session")


def thread_kept(thread_id: str) -> str:
    """When the thread's long-lived keys were last given their lifetime (see ``keep_thread`` in _lib.lua):
    a write to one of them from outside the scripts deletes it, so the next script sets them all."""
    return _own(thread_id, "keep")


def active(thread_id: str) -> str:
    return _own(thread_id, "active")


def items(thread_id: str) -> str:
    return _own(thread_id, "items")


def seen(thread_id: str, event_id: str) -> str:
    """Marks a platform event as handled, so its redeliveries are dropped as duplicates."""
    return _of(thread_id, "seen", event_id)


def watch(thread_id: str, prompt_id: str) -> str:
    """Alive while the agent waits on the prompt (long-poll, SSE or client wait)."""
    return _of(thread_id, "watch", prompt_id)


def chat_outbox(thread_id: str) -> str:
    return _own(thread_id, "chat")


def pub_outbox(thread_id: str) -> str:
    return _own(thread_id, "pub")


def admission(thread_id: str) -> str:
    """Held while one answer to the thread is being admitted over REST (one at a time)."""
    return _own(thread_id, "admit")


def rate_window(name: str) -> str:
    """A rate limit's counter for one window of one caller (``name`` says whose, and which rule)."""
    return f"tg:rl:{name}"


def lease(name: str) -> str:
    """Held by the one process that runs lease ``name`` (a bot token's connection)."""
    return f"tg:lease:{name}"


def lease_fence(name: str) -> str:
    """Counts a lease's acquisitions: each holder's fencing token."""
    return f"tg:lease:{name}:fence"


def prompt_index(prompt_id: str) -> str:
    """Which thread a prompt lives in."""
    return f"tg:pidx:{prompt_id}"


def run_index(run_id: str) -> str:
    """Which thread a run lives in."""
    return f"tg:ridx:{run_id}"


def agent_pending(agent: str, part: int) -> str:
    """A zset: one agent's pending prompt ids in a partition, by creation time (its inbox)."""
    return _partitioned(part, f"pending:{agent}", f"tg:pending:{agent}")


def agent(agent: str) -> str:
    """An agent's definition; shares the hash tag ``{<agent>}`` with its approvers (written together)."""
    return f"tg:agent:{{{agent}}}"


def agent_approval(agent: str) -> str:
    """An agent's approval policy (JSON), beside its definition."""
    return f"tg:agent-approval:{{{agent}}}"


def approvers(agent: str) -> str:
    return f"tg:approvers:{{{agent}}}"


def session_thread(session_key: str) -> str:
    """The thread an agent session's prompts go to; shares the hash tag ``{<key>}`` with its claim."""
    return f"tg:session:{{{session_key}}}"


def session_claim(session_key: str) -> str:
    """Held while one process posts a session's header, so two first prompts start one thread."""
    return f"tg:session-claim:{{{session_key}}}"


def session_call(session_key: str, call_id: str) -> str:
    """The prompt asking about one tool call of a session, found again when the session resumes."""
    return f"tg:session-call:{{{session_key}}}:{call_id}"


def draft(thread_id: str, name: str) -> str:
    """A channel's answer in progress in the thread (a step-by-step form, a pending text request)."""
    return _of(thread_id, "draft", name)


def prompt_drafts(thread_id: str, prompt_id: str) -> str:
    """A set: the names of the drafts kept for a prompt, deleted with them when the prompt settles."""
    return _of(thread_id, "drafts", prompt_id)


def webhook_delivery(delivery_id: str) -> str:
    """A queued webhook delivery (URL, body, attempts, first try): a hash in the webhook queue's slot."""
    return f"{WEBHOOK_PREFIX}d:{delivery_id}"


def webhook_seen(delivery_id: str) -> str:
    """Marks a delivery id as queued (for the dedupe time), so a second enqueue of it adds nothing."""
    return f"{WEBHOOK_PREFIX}s:{delivery_id}"


def feed_seen(stream: str, event_id: str) -> str:
    """Marks an event (or queued message) as appended to a feed partition, so a second drain of it adds
    nothing: in the partition's slot (its prefix), so one script touches both."""
    return f"{stream}:seen:{event_id}"


def session_run(thread_id: str, session_key: str) -> str:
    """The run an agent session's questions share in this thread (a grant outlives one question)."""
    return _of(thread_id, "session_run", session_key)


def signin_login(digest: str) -> str:
    """A string: a sign-in under way (state, nonce, PKCE verifier, next page), by a keyed hash of the
    state."""
    return f"tg:signin:login:{digest}"


def signin_session(digest: str) -> str:
    """A string: a signed-in person's session, by a keyed hash of the id its cookie holds."""
    return f"tg:signin:session:{digest}"


# The directory of people: one hash tag, so a script checks and changes the identity index atomically.
PEOPLE_PREFIX = "tg:{people}:"
PEOPLE_ALL = f"{PEOPLE_PREFIX}all"  # set: every person id
PEOPLE_INDEX = f"{PEOPLE_PREFIX}idx"  # hash: identity -> person id
PEOPLE_GROUPS = f"{PEOPLE_PREFIX}groups"  # hash: group name -> JSON (members, rotation)


def person(person_id: str) -> str:
    """A person's record (JSON: name, email, groups)."""
    return f"{PEOPLE_PREFIX}p:{person_id}"


def person_identities(person_id: str) -> str:
    """A set: a person's identities (the index says the same the other way)."""
    return f"{PEOPLE_PREFIX}i:{person_id}"


def push_subscriptions(person_id: str) -> str:
    """A hash: a person's Web Push subscriptions, by a hash of each endpoint."""
    return f"{PEOPLE_PREFIX}push:{person_id}"


def link_code(code: str) -> str:
    """A one-time link code: "new <person>", then "used <person> <identity>" until it would have expired."""
    return f"{PEOPLE_PREFIX}code:{code}"


def link_codes_window(person_id: str) -> str:
    """Counts the link codes a person asked for in the current window."""
    return f"{PEOPLE_PREFIX}codes:{person_id}"
