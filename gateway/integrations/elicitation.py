"""MCP elicitation relayed to chat: a server's form becomes a ``form`` prompt, its URL step a ``url`` prompt.

Claude Code's ``Elicitation`` hook passes ``mcp_server_name``, ``message``, ``mode`` (``form``/``url``),
``requested_schema``, ``url`` and ``elicitation_id``; the person's answer goes back as ``action``
(accept/decline/cancel) and, for a form, ``content``.
"""

from __future__ import annotations

from typing import Any, Literal

from gateway.base.models import MAX_QUESTION_CHARS, Prompt, PromptKind, PromptState, ReasonCode
from gateway.client import Allowed, Threadgate
from gateway.client.target import Target
from gateway.integrations import hook_output
from gateway.integrations.asking import Ask, Unavailable, ask


def elicitation_request(data: dict[str, Any], *, key: str, header: str) -> Ask:
    """The form or URL-step prompt for an Elicitation hook's input; ValueError when it has neither shape."""
    server, message = str(data.get("mcp_server_name") or "an MCP server"), str(data.get("message") or "")
    text = f"{message}\n(asked by {server})"[:MAX_QUESTION_CHARS]
    mode = data.get("mode") or ("url" if data.get("url") else "form")
    if mode == "url":
        url = data.get("url")
        if not isinstance(url, str) or not url:
            raise ValueError("a URL elicitation needs its url")
        return Ask("url", [], key, header, body={"message": text, "url": url})
    if mode != "form":
        raise ValueError(f"elicitation mode {mode!r} is neither form nor url")
    schema = data.get("requested_schema")
    if not isinstance(schema, dict):
        raise ValueError("a form elicitation needs its requested_schema")
    return Ask("form", [], key, header, body={"message": text, "requested_schema": schema})


Action = Literal["accept", "decline", "cancel"]


def elicitation_action(prompt: Prompt) -> tuple[Action, dict[str, Any] | None]:
    """The action (and a form's content) for a settled prompt; Unavailable when it settled without anyone
    deciding (expired, superseded, the run ended)."""
    if prompt.prompt_state is PromptState.ANSWERED:
        return "accept", prompt.content if prompt.kind is PromptKind.FORM else None
    if prompt.reason_code is ReasonCode.DECLINED:
        return "decline", None
    if prompt.reason_code is ReasonCode.CANCELLED:
        return "cancel", None
    raise Unavailable(prompt.reason or "the question was withdrawn")


async def ask_elicitation(
    tg: Threadgate, target: Target, data: dict[str, Any], *, key: str, header: str
) -> hook_output.Output:
    """Ask the form or URL step in chat; the hook's output. Unavailable when nobody could answer."""
    prompt = await ask(tg, target, elicitation_request(data, key=key, header=header))
    if isinstance(prompt, Allowed):  # only approvals go through the approval policy; a form is always asked
        raise Unavailable("the gateway did not raise the question")
    action, content = elicitation_action(prompt)
    return hook_output.elicitation(action, content)
