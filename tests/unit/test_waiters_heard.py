"""What a process makes of a prompt-settled message: its waiters are woken with how the prompt settled,
unless it settled the prompt itself and handed the prompt to them already."""

from __future__ import annotations

import json
from typing import cast

from gateway.base.models import Prompt
from gateway.delivery.waiters import Waiters

SETTLED_FIELDS = json.dumps(["state", "answered", "answers", '[{"question": "Q", "answer": ["A"]}]'])


async def test_a_waiter_is_handed_the_settled_fields_the_message_carries() -> None:
    waiters = Waiters(redis=None)
    with waiters.watch("prm_1") as watch:
        waiters._heard(f"prm_1 {SETTLED_FIELDS}")
        assert watch.future.done()
        settled = watch.future.result()
        assert settled.fields is not None and settled.fields["state"] == "answered"


async def test_a_prompt_this_process_handed_over_is_not_read_from_its_message_again() -> None:
    waiters = Waiters(redis=None)
    with waiters.watch("prm_1") as watch:
        handed = cast(Prompt, object())
        waiters.notify("prm_1", prompt=handed)
        waiters._heard(f"prm_1 {SETTLED_FIELDS}")
        settled = watch.future.result()
        assert settled.fields is None and settled.prompt is handed


async def test_a_message_for_a_prompt_nobody_here_waits_on_wakes_nobody() -> None:
    waiters = Waiters(redis=None)
    with waiters.watch("prm_1") as watch:
        waiters._heard(f"prm_2 {SETTLED_FIELDS}")
        assert not watch.future.done()
