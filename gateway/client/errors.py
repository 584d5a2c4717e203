"""What the gateway's answers mean when they are not a success: errors as values with the contract's code."""

from __future__ import annotations

from typing import Any

import httpx

from gateway.base.models import Prompt


class ThreadgateError(Exception):
    """An error answered by the gateway: the contract's ``code``, ``message`` and ``details``."""

    def __init__(self, code: str, message: str, status: int, details: dict[str, Any] | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.status = status
        self.details = details or {}


class PromptUnavailable(ThreadgateError):
    """The prompt could not be posted to the chat: the question was never asked (not a denial)."""


class ApprovalMismatch(Exception):
    """The approval on record is for other arguments than the call about to run: it approves nothing."""


class PromptCancelled(Exception):
    """The prompt settled without an answer (run ended, superseded, declined, expired, cancelled)."""

    def __init__(self, prompt: Prompt) -> None:
        super().__init__(f"prompt {prompt.prompt_id} was cancelled: {prompt.reason} ({prompt.reason_code})")
        self.prompt = prompt


def error_from(response: httpx.Response) -> ThreadgateError:
    """The error a failed response carries, or ``HTTP_ERROR`` when its body is not the contract's shape."""
    try:
        body = response.json()["error"]
        code, message, details = str(body["code"]), str(body["message"]), dict(body.get("details") or {})
    except (ValueError, KeyError, TypeError):
        code, message, details = "HTTP_ERROR", f"HTTP {response.status_code}", {}
    kind = PromptUnavailable if code == "PROMPT_UNAVAILABLE" else ThreadgateError
    return kind(code, message, response.status_code, details)
