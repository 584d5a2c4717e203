"""One question to a person, start to finish: find the thread, start a run, raise, wait, end the run."""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from typing import Any, Literal

import httpx

from gateway.client import Threadgate, ThreadgateError
from gateway.integrations.sessions import NotConfigured, thread_for
from gateway.integrations.settings import Target
from gateway.models import Prompt

logger = logging.getLogger("threadgate.integrations")

GAVE_UP_REASON = "the agent stopped waiting for an answer"


class Unavailable(Exception):
    """The person could not be asked or did not answer in time: never a denial."""


@dataclass(frozen=True, slots=True)
class Ask:
    """What to ask: the prompt's kind and questions, the real tool call for approvals, and whose session."""

    kind: Literal["approval", "ask_user_question", "text"]
    questions: list[dict[str, Any]]
    session_key: str
    header: str
    tool_call: dict[str, Any] | None = None


async def ask(tg: Threadgate, target: Target, request: Ask) -> Prompt:
    """Ask in the session's thread and return the settled prompt (answered, or cancelled with a reason).

    Raises Unavailable when the gateway cannot be reached, the prompt cannot be posted, or ``target.wait_s``
    passes unanswered (the prompt is then cancelled, so the chat shows it is no longer waiting).
    """
    try:
        thread = await thread_for(tg, target, key=request.session_key, header=request.header)
        run = await tg.create_run(thread, target.agent, target.started_by)
    except NotConfigured as exc:
        raise Unavailable(str(exc)) from exc
    except (httpx.HTTPError, ThreadgateError) as exc:
        raise Unavailable(f"the gateway could not start the question ({_describe(exc)})") from exc
    prompt_id: str | None = None
    try:
        prompt = await tg.raise_prompt(
            run.run_id, request.kind, request.questions, tool_call=request.tool_call
        )
        prompt_id = prompt.prompt_id
        return await tg.wait_prompt(prompt_id, timeout=target.wait_s)
    except TimeoutError as exc:
        if prompt_id is not None:
            with contextlib.suppress(httpx.HTTPError, ThreadgateError):
                await tg.cancel_prompt(prompt_id, GAVE_UP_REASON)
        raise Unavailable(f"nobody answered within {target.wait_s} s") from exc
    except (httpx.HTTPError, ThreadgateError) as exc:
        raise Unavailable(_describe(exc)) from exc
    finally:
        with contextlib.suppress(httpx.HTTPError, ThreadgateError):
            await tg.end_run(run.run_id)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, ThreadgateError):
        return exc.message
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
