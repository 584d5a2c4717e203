"""A hook's quick answer: a tool call the agent's approval policy lets through costs one small HTTP request.

With Claude Code's headless ``PreToolUse`` matcher ``*`` every tool call of a run starts a hook process,
so the common case (a call the policy allows: ``Read``, ``Grep``, …) must cost about what starting Python
costs. This module loads ``json``, ``socket`` and ``gateway.client.env`` (``os`` alone), asks
``POST /v1/agents/{agent}/policy`` and, when the policy allows the call, the hook prints nothing and the
tool goes on. Anything else (a call to ask about, a question, an elicitation, the gateway unreachable or
answering otherwise, input it does not understand) goes the whole way, through
``gateway.integrations.hooks``, which decides exactly as before.

The request is one HTTP/1.1 exchange written on a socket: ``urllib.request`` and ``http.client`` load
``ssl`` and the ``email`` package, which cost more than the rest of the path together. A gateway reached
over ``https`` is asked through ``urllib.request``.
"""

from __future__ import annotations

import json
import os
import socket

from gateway.client.env import agent_from_env, gateway_url

TYPE_CHECKING = False  # typing itself costs a hook process more than its request
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

# Per tool: its product name (said in chat) and the agent its sessions belong to by default.
TOOLS: dict[str, tuple[str, str]] = {"claude": ("Claude Code", "claude-code"), "codex": ("Codex", "codex")}
MAX_INPUT_CHARS = 1_000_000
QUESTION_TOOLS = frozenset({"AskUserQuestion"})  # asked as questions, never allowed by a policy
POLICY_TIMEOUT_S = 2.0  # on a slow answer the whole path asks again, with its own deadlines
MAX_ANSWER_BYTES = 65_536


def allowed_by_policy(tool: str, raw: str, environ: Mapping[str, str] | None = None) -> bool:
    """Whether the agent's approval policy lets the call in the hook input ``raw`` run without asking.

    False whenever that is not certain: the whole path then decides (and asks the same policy first)."""
    env = os.environ if environ is None else environ
    call = _tool_call(raw)
    if call is None or tool not in TOOLS:
        return False
    agent = agent_from_env(TOOLS[tool][1], env)
    body = json.dumps({"tool_call": call}).encode()
    token = env.get("THREADGATE_TOKEN", "").strip()
    try:
        answer = _post(gateway_url(env), f"/v1/agents/{_quoted(agent)}/policy", body, token)
        verdict = json.loads(answer) if answer is not None else None
    except (OSError, ValueError):
        return False
    return isinstance(verdict, dict) and verdict.get("decision") == "allow"


def _tool_call(raw: str) -> dict[str, Any] | None:
    """The tool call of a ``PreToolUse`` or ``PermissionRequest`` input; None for anything else."""
    if len(raw) > MAX_INPUT_CHARS:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    if data.get("hook_event_name", "PermissionRequest") not in ("PreToolUse", "PermissionRequest"):
        return None
    name, arguments = data.get("tool_name"), data.get("tool_input")
    if not isinstance(name, str) or not name or name in QUESTION_TOOLS or not isinstance(arguments, dict):
        return None
    return {"name": name, "arguments": arguments}


def _quoted(segment: str) -> str:
    """A path segment, percent-encoded but for the characters an agent name may hold unencoded."""
    safe = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
    return "".join(char if char in safe else "".join(f"%{b:02X}" for b in char.encode()) for char in segment)


def _post(url: str, path: str, body: bytes, token: str) -> bytes | None:
    """The body of a 200 answer to ``POST url+path``; None for any other answer."""
    scheme, _, rest = url.partition("://")
    if scheme == "https":
        return _post_tls(url + path, body, token)
    if scheme != "http":
        return None
    authority, _, prefix = rest.partition("/")
    host, port = _host_port(authority)
    target = "/" + "/".join(part for part in (prefix.strip("/"), path.strip("/")) if part)
    headers = [
        f"POST {target} HTTP/1.1",
        f"Host: {authority}",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
        "Connection: close",
    ]
    if token:
        headers.append(f"Authorization: Bearer {token}")
    request = ("\r\n".join(headers) + "\r\n\r\n").encode("latin-1") + body
    with socket.create_connection((host, port), POLICY_TIMEOUT_S) as connection:
        connection.sendall(request)
        received = bytearray()
        while len(received) <= MAX_ANSWER_BYTES:
            chunk = connection.recv(16_384)
            if not chunk:
                break
            received += chunk
    head, _, answer = bytes(received).partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    if not lines[0].startswith(b"HTTP/1.1 200 ") and not lines[0].startswith(b"HTTP/1.0 200 "):
        return None
    fields = {
        name.strip().lower(): value.strip() for name, _, value in (line.partition(b":") for line in lines[1:])
    }
    if fields.get(b"transfer-encoding", b"").lower() == b"chunked":
        return None  # not how the gateway answers this route; the whole path asks instead
    return answer


def _host_port(authority: str) -> tuple[str, int]:
    """``host`` and port of ``host[:port]`` or ``[v6]:port`` (port 80 when none is given)."""
    if authority.startswith("["):
        host, _, after = authority[1:].partition("]")
        return host, int(after.removeprefix(":") or 80)
    host, colon, port = authority.rpartition(":")
    return (host, int(port)) if colon else (authority, 80)


def _post_tls(url: str, body: bytes, token: str) -> bytes | None:
    import urllib.request  # only for a gateway reached over https: it loads ssl

    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=POLICY_TIMEOUT_S) as response:
        return bytes(response.read(MAX_ANSWER_BYTES)) if response.status == 200 else None
