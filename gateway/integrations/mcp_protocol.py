"""The MCP protocol's errors as the 2025-11-25 specification words them, over stdio and HTTP alike.

An unknown tool or prompt is a JSON-RPC error -32602 (invalid params), not a tool result; so is a request
whose ``params`` are not an object (the SDK's transports would drop it, or answer without its id). A batch
(JSON-RPC batching is not part of MCP since 2025-06-18), a request whose id is not a string or an integer
(null, an object, a fraction), or anything else that is not one JSON-RPC message is -32600 (invalid request),
in our words rather than a validator's. Nothing a client sends puts a traceback on stderr.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterable, AsyncIterator, Mapping
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, INVALID_REQUEST, jsonrpc_message_adapter
from pydantic import ValidationError

# A request whose params were not an object arrives under this name, so the SDK answers it with its id.
MALFORMED_PARAMS = "threadgate/malformed-params"


def rewritten(message: Any) -> Any:
    """A JSON-RPC request whose ``params`` are present but not an object, renamed to ``MALFORMED_PARAMS``
    (the method it named kept in its params); any other message unchanged."""
    if not isinstance(message, dict) or "id" not in message or not isinstance(message.get("method"), str):
        return message
    if "params" not in message or isinstance(message["params"], dict):
        return message
    method = message["method"][:100]
    return {**message, "method": MALFORMED_PARAMS, "params": {"method": method}}


def rewritten_line(line: str) -> str:
    """``rewritten`` for a line of JSON (or an HTTP body); what is not JSON is left for the SDK to refuse."""
    try:
        message = json.loads(line)
    except ValueError:
        return line
    fixed = rewritten(message)
    return line if fixed is message else json.dumps(fixed) + "\n"


def _is_request_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def invalid_request(message: Any) -> str | None:
    """Why ``message`` (parsed JSON, after ``rewritten``) is not one JSON-RPC message MCP takes, or None."""
    if isinstance(message, list):
        return "Invalid Request: MCP takes one JSON-RPC message per request, not a batch (a JSON array)."
    if not isinstance(message, dict):
        return "Invalid Request: a JSON-RPC message is a JSON object."
    if "method" in message and "id" in message and not _is_request_id(message["id"]):
        return "Invalid Request: a request's id is a string or an integer, never null."
    try:
        jsonrpc_message_adapter.validate_python(message, by_name=False)
    except ValidationError:
        return "Invalid Request: not a JSON-RPC 2.0 request, notification or response."
    return None


def refused_line(line: str) -> dict[str, Any] | None:
    """The -32600 error (no id) answering a line of JSON (or an HTTP body) that ``invalid_request`` refuses;
    None for one the SDK may take (what is not JSON at all it answers itself, -32700)."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    problem = invalid_request(rewritten(message))
    if problem is None:
        return None
    return {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": problem}}


async def checked_lines(lines: AsyncIterable[str]) -> AsyncIterator[str]:
    """The stdio transport's input, each line passed through ``rewritten_line``."""
    async for line in lines:
        yield rewritten_line(line)


class KnownNames:
    """Server middleware: -32602 for a malformed request, an unknown tool (``tools/call``) or prompt
    (``prompts/get``), before the SDK turns them into a tool result or an internal error."""

    def __init__(self, server: MCPServer) -> None:
        self.server = server

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method == MALFORMED_PARAMS:
            method = (ctx.params or {}).get("method")
            raise MCPError(INVALID_PARAMS, f"The params of {method} must be an object.")
        name = ctx.params.get("name") if isinstance(ctx.params, Mapping) else None
        if ctx.method == "tools/call" and isinstance(name, str) and not await self._has_tool(name):
            raise MCPError(INVALID_PARAMS, f"Unknown tool: {name[:100]}")
        if ctx.method == "prompts/get" and isinstance(name, str) and not await self._has_prompt(name):
            raise MCPError(INVALID_PARAMS, f"Unknown prompt: {name[:100]}")
        return await call_next(ctx)

    async def _has_tool(self, name: str) -> bool:
        return name in {tool.name for tool in await self.server.list_tools()}

    async def _has_prompt(self, name: str) -> bool:
        return name in {prompt.name for prompt in await self.server.list_prompts()}


class WithoutTracebacks(logging.Filter):
    """Keeps a record's message and drops its traceback: a client's input is never a crash report."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        return True
