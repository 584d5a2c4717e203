"""``ask_form``'s flow, for both clients: a flat form asked until its answer is one the agent can take."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from gateway.base.models import PromptState, ReasonCode
from gateway.client.calls import Flow, post_message, raise_prompt, step_body, wait_prompt
from gateway.client.errors import PromptCancelled
from gateway.client.model_forms import NotTaken, prefilled

T = TypeVar("T")
ASKED_AGAIN = "The form is asked again with your answers filled in."


def ask_form(
    run_id: str,
    message: str,
    schema: dict[str, Any],
    read: Callable[[dict[str, Any]], T],
    *,
    expires_in_seconds: int | None,
    timeout: float | None,
    reconnect_delay: float,
) -> Flow[T | None]:
    """A flat form, answered: its content as ``read`` takes it, or None when the person declined
    (PromptCancelled for any other way it settles unanswered).

    Content ``read`` refuses (NotTaken) is no answer: the person is told ``Not taken: <why>`` in the
    thread and asked the form again with their values filled in, within the same ``timeout``."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        body = step_body("form", message, schema, None, expires_in_seconds)
        raised = yield from raise_prompt(run_id, body, reconnect_delay)
        left = None if deadline is None else deadline - time.monotonic()
        prompt = yield from wait_prompt(raised.prompt_id, left, reconnect_delay)
        if prompt.prompt_state is not PromptState.ANSWERED:
            if prompt.reason_code is ReasonCode.DECLINED:
                return None
            raise PromptCancelled(prompt)
        content = dict(prompt.content or {})
        try:
            return read(content)
        except NotTaken as refused:
            yield from post_message(prompt.thread_id, f"Not taken: {refused}. {ASKED_AGAIN}")
            schema = prefilled(schema, content)
