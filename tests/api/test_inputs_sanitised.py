"""What a person writes reaches the agent printable, and whole routes hold to the documented limits: a note
is cut to 2,000 characters (not refused), control characters and bidi overrides are removed, an edit keeps
its arguments' types and values past a body's limits are 400, never a 5xx."""

from __future__ import annotations

import json

import httpx
import pytest

from gateway.base.models import InboundMessage
from gateway.base.printable import printable
from tests.api.conftest import STARTER, THREAD, Served
from tests.api.test_decisions import _approval, _input

UNPRINTABLE = [
    "\x1b",
    "\x00",
    "\x07",
    "\r",
    "\x7f",
    "\x85",
    "\x9b",
    "\u202e",
    "\u202a",
    "\u2066",
    "\u2069",
]


@pytest.mark.parametrize("bad", UNPRINTABLE)
def test_control_characters_and_bidi_overrides_are_removed(bad: str) -> None:
    assert printable(f"use{bad} staging\tcopy\n") == "use staging\tcopy\n"


@pytest.mark.parametrize("length", [2001, 5000, 15000])
async def test_a_rest_note_over_2000_characters_is_cut_not_refused(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient, length: int
) -> None:
    prompt = await _approval(agent)
    response = await _input(
        operator, prompt["prompt_id"], action="decline", note="n" * length, **{"from": STARTER}
    )
    assert response.status_code == 200, response.text
    note = (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()["note"]
    assert len(note) == 2000 and note.endswith("…")


@pytest.mark.parametrize("bad", UNPRINTABLE)
async def test_notes_and_free_text_reach_the_agent_printable(
    served: Served, agent: httpx.AsyncClient, operator: httpx.AsyncClient, bad: str
) -> None:
    denied = await _approval(agent)
    await _input(operator, denied["prompt_id"], action="decline", note=f"no{bad}pe", **{"from": STARTER})
    assert (await agent.get(f"/v1/prompts/{denied['prompt_id']}")).json()["note"] == "nope"
    typed = await _approval(agent)
    await served.runtime.gateway.receive(
        InboundMessage(thread_id=THREAD, sender=STARTER, text=f"not{bad} now")
    )
    assert (await agent.get(f"/v1/prompts/{typed['prompt_id']}")).json()["note"] == "not now"


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"command": "rm -rf build", "timeout": "many"}, "timeout"),
        ({"command": "rm -rf build", "timeout": True}, "timeout"),
        ({"command": "rm -rf build", "timeout": 2.5}, "timeout"),
        ({"command": 7, "timeout": 30}, "command"),
    ],
)
async def test_rest_edits_keep_their_arguments_types(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient, arguments: dict[str, object], field: str
) -> None:
    prompt = await _approval(agent, editable=True)
    response = await _input(
        operator, prompt["prompt_id"], action="accept", arguments=arguments, **{"from": STARTER}
    )
    error = response.json()["error"]
    assert (response.status_code, error["code"]) == (400, "VALIDATION_FAILED")
    assert [entry["field"] for entry in error["details"]["errors"]] == [field]
    assert (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()["prompt_state"] == "pending"


@pytest.mark.parametrize(
    "arguments",
    ['{"command": "ls \\ud800"}', '{"command": ' + "[" * 31 + "]" * 31 + "}", '{"timeout": 1e999}'],
)
async def test_rest_edits_past_a_bodys_limits_are_400(
    agent: httpx.AsyncClient, operator: httpx.AsyncClient, arguments: str
) -> None:
    prompt = await _approval(agent, editable=True)
    body = f'{{"action": "accept", "from": {json.dumps(STARTER)}, "arguments": {arguments}}}'
    response = await operator.post(
        f"/v1/agents/ops/inputs/{prompt['prompt_id']}",
        content=body,
        headers={"content-type": "application/json"},
    )
    assert (response.status_code, response.json()["error"]["code"]) == (400, "VALIDATION_FAILED")
    assert (await agent.get(f"/v1/prompts/{prompt['prompt_id']}")).json()["prompt_state"] == "pending"
