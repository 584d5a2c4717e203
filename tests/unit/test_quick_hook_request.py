"""The hook's one request, written on a socket: what it sends, and every answer but a plain 200 "allow"
sends the call the whole way."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from gateway.integrations.quick_hook import _host_port, allowed_by_policy

CALL = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": "a"}})
ALLOW = b'{"decision": "allow", "by": "policy"}'


@contextmanager
def answering(answer: bytes) -> Iterator[tuple[int, list[bytes]]]:
    """A one-connection server on loopback that records the request and sends ``answer``."""
    server = socket.create_server(("127.0.0.1", 0))
    seen: list[bytes] = []

    def serve() -> None:
        connection, _ = server.accept()
        with connection:
            data = b""
            while b"\r\n\r\n" not in data:
                data += connection.recv(4096)
            head, _, body = data.partition(b"\r\n\r\n")
            lengths = [line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")]
            length = int(lengths[0].split(b":")[1])
            while len(body) < length:
                body += connection.recv(4096)
            seen.append(head + b"\r\n\r\n" + body)
            connection.sendall(answer)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], seen
    finally:
        thread.join(5)
        server.close()


def _reply(status: bytes, body: bytes, *headers: bytes) -> bytes:
    extra = b"".join(header + b"\r\n" for header in headers)
    return (
        b"HTTP/1.1 "
        + status
        + b"\r\nContent-Length: "
        + str(len(body)).encode()
        + b"\r\n"
        + extra
        + b"\r\n"
        + body
    )


def test_an_allow_from_the_policy_route_is_taken_and_the_request_is_what_the_route_reads() -> None:
    with answering(_reply(b"200 OK", ALLOW)) as (port, seen):
        env = {
            "THREADGATE_URL": f"http://127.0.0.1:{port}/gw/",
            "THREADGATE_TOKEN": "tok",
            "THREADGATE_AGENT": "a b",
        }
        assert allowed_by_policy("claude", CALL, env) is True
    head, _, body = seen[0].partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"POST /gw/v1/agents/a%20b/policy HTTP/1.1"
    assert b"Authorization: Bearer tok" in lines and b"Connection: close" in lines
    assert json.loads(body) == {"tool_call": {"name": "Read", "arguments": {"file_path": "a"}}}


@pytest.mark.parametrize(
    "answer",
    [
        _reply(b"200 OK", b'{"decision": "ask", "by": "policy"}'),
        _reply(b"401 Unauthorized", b'{"decision": "allow"}'),
        _reply(b"404 Not Found", ALLOW),
        _reply(b"500 Internal Server Error", ALLOW),
        _reply(b"200 OK", b"not json"),
        _reply(b"200 OK", b'["allow"]'),
        _reply(b"200 OK", b"5\r\nhello\r\n0\r\n\r\n", b"Transfer-Encoding: chunked"),
        b"garbage",
        b"",
    ],
)
def test_any_other_answer_goes_the_whole_way(answer: bytes) -> None:
    with answering(answer) as (port, _seen):
        assert allowed_by_policy("claude", CALL, {"THREADGATE_URL": f"http://127.0.0.1:{port}"}) is False


def test_a_gateway_nobody_answers_goes_the_whole_way() -> None:
    with socket.create_server(("127.0.0.1", 0)) as closed:
        port = closed.getsockname()[1]
    assert allowed_by_policy("claude", CALL, {"THREADGATE_URL": f"http://127.0.0.1:{port}"}) is False


@pytest.mark.parametrize(
    ("authority", "expected"),
    [("127.0.0.1:8787", ("127.0.0.1", 8787)), ("gateway", ("gateway", 80)), ("[::1]:9000", ("::1", 9000))],
)
def test_host_and_port_are_read_from_the_url(authority: str, expected: tuple[str, int]) -> None:
    assert _host_port(authority) == expected
