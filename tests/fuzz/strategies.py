"""Hypothesis strategies for hostile requests: every route, credentials or none, bodies that are valid
templates with one value swapped for something nasty, or raw bytes that are not what they claim."""

from __future__ import annotations

import copy
import json
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from hypothesis import strategies as st

from gateway.base.cursors import LAST_STREAM_ID, U64

INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u202e\u202c\u3164\u2800\u00ad\u034f \t\n"
LONE_SURROGATES = ["\ud800", "\udfff", "a\udc00b"]


@dataclass(frozen=True)
class Route:
    """One ingress route: its method, path template, who it belongs to, and a body it accepts."""

    method: str
    path: str
    family: str  # api, slack, telegram, web, page
    body: dict[str, Any] | None = None
    query: tuple[str, ...] = ()
    stream: bool = False


QUESTIONS = {
    "kind": "ask_user_question",
    "questions": [
        {
            "question": "Where?",
            "multiSelect": False,
            "options": [{"label": "staging", "description": "s"}, {"label": "production"}],
        }
    ],
    "expires_in_seconds": 60,
}
ROUTES = [
    Route("POST", "/v1/runs", "api", {"thread_id": "web:fuzz", "agent": "ops", "started_by": "web:alice"}),
    Route("POST", "/v1/runs/{run_id}/end", "api"),
    Route("POST", "/v1/runs/{run_id}/prompts", "api", QUESTIONS),
    Route("GET", "/v1/prompts/{prompt_id}", "api", query=("wait",)),
    Route("POST", "/v1/prompts/{prompt_id}/cancel", "api", {"reason": "no longer needed"}),
    Route("GET", "/v1/prompts", "api", query=("state", "agent", "thread_id", "cursor", "limit")),
    Route("GET", "/v1/events", "api", query=("after", "thread_id", "run_id", "agent"), stream=True),
    Route("POST", "/v1/threads/{thread_id}/items", "api", {"content": [{"type": "text", "text": "hi"}]}),
    Route("GET", "/v1/threads/{thread_id}/items", "api", query=("after", "limit")),
    Route("GET", "/v1/messages", "api", query=("after", "wait", "thread_id", "limit")),
    Route("GET", "/v1/agents/{agent}/inputs", "api", query=("state", "cursor", "limit")),
    Route(
        "POST",
        "/v1/agents/{agent}/inputs/{prompt_id}",
        "api",
        {"action": "accept", "content": [{"question": "Where?", "answer": ["staging"]}], "from": "web:alice"},
    ),
    Route(
        "PUT",
        "/v1/agents/{agent}",
        "api",
        {"human_input": {"expires_in_seconds": 60, "approvers": ["web:bob"]}},
    ),
    Route("GET", "/v1/agents/{agent}", "api"),
    Route(
        "POST",
        "/v1/agent-runs/{run_id}/threads/{thread_id}/user-inputs/{prompt_id}/respond",
        "api",
        {"answers": [{"questionId": "q1", "selected": ["staging"], "otherText": None}]},
    ),
    Route("PUT", "/v1/sessions/{session_key}/thread", "api", {"channel": "web:fuzz", "header": "Session 1"}),
    Route("GET", "/v1/sessions/{session_key}/thread", "api"),
    Route(
        "POST",
        "/mcp",
        "api",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "f", "version": "1"},
            },
        },
    ),
    Route("GET", "/mcp", "api", stream=True),
    Route("DELETE", "/mcp", "api"),
    Route("POST", "/slack/events", "slack", {}),  # the body is a fresh Slack callback, see slack_body
    Route("POST", "/telegram/webhook", "telegram", {}),  # a fresh Telegram update, see telegram_body
    Route("GET", "/chat/{room}", "page"),
    Route("POST", "/chat/{room}/session", "web", {"name": "bob"}),
    Route("GET", "/chat/{room}/events", "web", query=("after",), stream=True),
    Route("POST", "/chat/{room}/messages", "web", {"name": "bob", "text": "2", "client_id": "c-1"}),
    Route("GET", "/inbox", "page"),
    Route("GET", "/inbox-assets/{name}", "page"),
    Route("GET", "/chat-assets/{name}", "page"),
]


def slack_body(user_text: str) -> dict[str, Any]:
    """An ``event_callback`` as Slack sends one: a message in a channel."""
    return {
        "token": "legacy",
        "team_id": "T0FUZZ",
        "api_app_id": "A0FUZZ",
        "type": "event_callback",
        "event_id": "Ev0FUZZ",
        "event_time": int(time.time()),
        "event": {
            "type": "message",
            "channel": "C0FUZZ",
            "user": "U0FUZZ",
            "text": user_text,
            "ts": "1.000100",
        },
    }


def telegram_body(user_text: str) -> dict[str, Any]:
    """An update as Telegram pushes one: a private message to the bot."""
    return {
        "update_id": 1,
        "message": {
            "message_id": 1,
            "date": int(time.time()),
            "chat": {"id": 42, "type": "private"},
            "from": {"id": 42, "is_bot": False, "first_name": "Fuzz"},
            "text": user_text,
        },
    }


# Values --------------------------------------------------------------------------------------------

texts = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=INVISIBLE, min_size=1, max_size=6),
    st.sampled_from(LONE_SURROGATES),
    st.text(min_size=1000, max_size=5000).map(lambda s: s[:5000]),
)
numbers = st.one_of(
    st.integers(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.sampled_from([0, -1, 2**31, 2**63, U64, U64 + 1, 10**300]),
    st.floats(allow_nan=False, allow_infinity=False),
)
scalars = st.one_of(st.none(), st.booleans(), numbers, texts)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)


def nested(depth: int, leaf: Any = 1) -> Any:
    value: Any = leaf
    for index in range(depth):
        value = [value] if index % 2 else {"a": value}
    return value


hostile_values = st.one_of(
    scalars,
    json_values,
    st.integers(min_value=30, max_value=400).map(nested),
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in ``value`` a field could be swapped: dict keys and list indexes, outermost first."""
    found: list[tuple[Any, ...]] = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for key, child in items:
        found.append((*prefix, key))
        found.extend(_paths(child, (*prefix, key)))
    return found


@st.composite
def mutated(draw: st.DrawFn, template: dict[str, Any]) -> Any:
    """``template`` as is, with one value swapped or a field dropped or added, or something else."""
    choice = draw(st.sampled_from(["as_is", "swap", "swap", "drop", "extra", "other"]))
    body = copy.deepcopy(template)
    places = _paths(body)
    if choice == "other" or (choice in ("swap", "drop") and not places):
        return draw(json_values)
    if choice == "extra":
        body[draw(st.text(min_size=1, max_size=10))] = draw(hostile_values)
    elif choice in ("swap", "drop"):
        *parents, last = draw(st.sampled_from(places))
        target: Any = body
        for key in parents:
            target = target[key]
        if choice == "drop":
            del target[last]
        else:
            target[last] = draw(hostile_values)
    return body


# Raw bytes -----------------------------------------------------------------------------------------


@st.composite
def raw_body(draw: st.DrawFn, value: Any) -> bytes:
    """``value`` as JSON bytes, or those bytes spoiled: invalid UTF-8, deep nesting, odd numbers, cut off."""
    encoded = json.dumps(value, ensure_ascii=draw(st.booleans()) or _has_surrogate(value)).encode(
        "utf-8", "surrogatepass"
    )
    spoil = draw(
        st.sampled_from(
            ["none", "none", "none", "bad_utf8", "deep", "number", "constant", "cut", "bytes", "empty"]
        )
    )
    if spoil == "bad_utf8":
        at = draw(st.integers(0, len(encoded)))
        return (
            encoded[:at]
            + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf8\x88\x80\x80"]))
            + encoded[at:]
        )
    if spoil == "deep":
        depth = draw(st.integers(30, 3000))
        opener, closer = draw(st.sampled_from([(b"[", b"]"), (b'{"a":', b"}")]))
        return opener * depth + encoded + closer * depth
    if spoil == "number":
        return draw(
            st.sampled_from([b"1" * 5000, b"-" + b"9" * 4400, b"1e999", b"-1e999", b"1" + b"0" * 400 + b".5"])
        )
    if spoil == "constant":
        return draw(st.sampled_from([b"NaN", b"Infinity", b'{"expires_in_seconds": NaN}']))
    if spoil == "cut":
        return encoded[: draw(st.integers(0, max(0, len(encoded) - 1)))]
    if spoil == "bytes":
        return draw(st.binary(max_size=200))
    if spoil == "empty":
        return b""
    return encoded


def _has_surrogate(value: Any) -> bool:
    return any(0xD800 <= ord(char) <= 0xDFFF for char in json.dumps(value, ensure_ascii=False))


content_types = st.sampled_from(
    [
        "application/json",
        "application/json",
        "application/json; charset=utf-8",
        "application/vnd.api+json",
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=fuzz",
        "application/jsonx",
        "",
        None,
    ]
)


# Addresses -----------------------------------------------------------------------------------------

cursors = st.one_of(
    st.sampled_from(
        ["0-0", "1-1", LAST_STREAM_ID, f"{U64 + 1}-0", f"0-{U64 + 1}", "9" * 20 + "-0", "1-", "-", "0"]
    ),
    st.from_regex(r"\A\d{1,22}-\d{1,22}\Z"),
    st.text(max_size=30),
)
query_values = {
    "after": cursors,
    "cursor": st.one_of(st.from_regex(r"\A\d{1,12}\Z"), st.text(max_size=20)),
    "limit": st.one_of(st.integers(-5, 1000).map(str), st.text(max_size=10), st.just("1" * 400)),
    "wait": st.one_of(
        st.sampled_from(["0", "0.01", "-1", "61", "nan", "inf", "1e999", "true"]), st.text(max_size=8)
    ),
    "state": st.sampled_from(["pending", "answered", "", "PENDING"]),
    "thread_id": st.one_of(st.sampled_from(["web:fuzz", "slack:C1:1.2", "web:"]), st.text(max_size=30)),
    "run_id": st.text(max_size=40),
    "agent": st.one_of(st.just("ops"), st.text(max_size=70)),
}


@dataclass
class Call:
    """One request to send."""

    route: Route
    path: str
    credential: str  # none, wrong, valid, other
    body: bytes | None = None
    content_type: str | None = None
    query: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)


def _fits_a_header(value: str) -> bool:
    """What an HTTP client will send as a header value: visible ASCII, no surrounding spaces."""
    return value == value.strip() and all(0x20 <= ord(c) <= 0x7E for c in value)


def path_part(seeded: str) -> st.SearchStrategy[str]:
    return st.one_of(
        st.just(seeded),
        st.just(seeded),
        st.text(min_size=1, max_size=60),
        st.text(min_size=200, max_size=400),
        st.sampled_from(["%00", "..", "web:é", "\ud800", "prm_" + "Z" * 26, "run_" + "0" * 26]),
    ).map(lambda part: quote(part.encode("utf-8", "surrogatepass"), safe=""))


@st.composite
def calls(draw: st.DrawFn, seeded: dict[str, str]) -> Call:
    """Any route, any credential, with a body, query and headers drawn to hurt."""
    route = draw(st.sampled_from(ROUTES))
    names = {
        "run_id": seeded["run_id"],
        "prompt_id": seeded["prompt_id"],
        "thread_id": seeded["thread_id"],
        "agent": "ops",
        "session_key": "fuzz-session",
        "room": "fuzz",
        "name": "inbox.js",
    }
    path = route.path
    for name, value in names.items():
        if "{" + name + "}" in path:
            path = path.replace("{" + name + "}", draw(path_part(value)))
    call = Call(route, path, draw(st.sampled_from(["none", "wrong", "valid", "valid", "valid", "other"])))
    if route.body is not None:
        template = route.body
        if route.family == "slack":
            template = slack_body(draw(texts))
        elif route.family == "telegram":
            template = telegram_body(draw(texts))
        # A correctly signed platform event with fields of the wrong type is for its SDK to read and the
        # channel to skip (the channels' own tests cover that); here signed events are spoiled as bytes.
        signed_event = route.family in ("slack", "telegram") and call.credential == "valid"
        call.body = draw(raw_body(template if signed_event else draw(mutated(template))))
        call.content_type = draw(content_types)
    for name in route.query:
        if draw(st.booleans()):
            call.query[name] = draw(query_values[name])
    if route.stream and draw(st.booleans()):
        call.headers["Last-Event-ID"] = draw(cursors.filter(_fits_a_header))
    if route.path == "/mcp":  # past the transport's Accept check often, with a session id or garbage
        call.headers["Accept"] = draw(st.sampled_from(["application/json, text/event-stream", "*/*", "x/y"]))
        if draw(st.booleans()):
            call.headers["Mcp-Session-Id"] = draw(cursors.filter(_fits_a_header))
        if draw(st.booleans()):
            call.headers["Mcp-Protocol-Version"] = draw(st.sampled_from(["2025-11-25", "2099-01-01", "x"]))
        if draw(st.booleans()):
            call.query["agent"] = draw(st.sampled_from(["ops", "other", "", "../x", "é" * 300]))
    return call
