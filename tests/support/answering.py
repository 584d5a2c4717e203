"""Answering a prompt the way a person in the inbox would, for tests whose code under test waits on one."""

from __future__ import annotations

import time
from collections.abc import Callable

from gateway.base.models import Prompt
from gateway.client import Client
from gateway.process.commands.prompts import answer_content

POLL_S = 0.02


def answer_next(
    base_url: str,
    operator_token: str,
    as_: str,
    words: list[str],
    wanted: Callable[[Prompt], bool] = lambda _prompt: True,
    seen: set[str] | None = None,
    timeout: float = 20.0,
) -> Prompt:
    """Wait for a pending prompt ``wanted`` says is the one (and not in ``seen``), then answer it as ``as_``
    with ``words`` (``approve``, an option's label), as ``threadgate prompts answer`` does."""
    seen = set() if seen is None else seen
    deadline = time.monotonic() + timeout
    with Client(base_url, operator_token) as client:
        while True:
            fresh = [p for p in client.list_prompts().items if p.prompt_id not in seen and wanted(p)]
            if fresh:
                prompt = fresh[0]
                seen.add(prompt.prompt_id)
                content = answer_content(prompt, words, [])
                return client.answer_input(
                    prompt.agent, prompt.prompt_id, "accept", content=content, from_=as_
                )
            if time.monotonic() > deadline:
                raise AssertionError(f"no pending prompt to answer within {timeout} s")
            time.sleep(POLL_S)
