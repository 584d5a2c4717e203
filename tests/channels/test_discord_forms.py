"""Seed 002's flat forms and URL steps on Discord: a modal (a page of up to five fields at a time) and
link, Done and Decline buttons, or a typed reply; the core's one validator and who-may-answer rule decide.
discord.py runs against the fake Discord, the core on Redis."""

from __future__ import annotations

from typing import Any

from channels.discord.forms import CHANGE_ANSWERS, DECLINE, DONE, FILL_IN, OPEN_PAGE
from gateway.base.models import Prompt, PromptRequest, PromptState, ReasonCode
from gateway.process.runtime import Runtime
from gateway.rules import notices
from tests.channels import discord_support
from tests.channels.discord_support import ALICE, BOB, CHANNEL_ID, GUILD_ID, eventually, start_run
from tests.fakes.discord import FakeDiscord, Interaction

fake = discord_support.fake
runtime = discord_support.runtime_on_redis

DEPLOY: dict[str, Any] = {
    "kind": "form",
    "message": "Deploy settings",
    "requested_schema": {
        "type": "object",
        "properties": {
            "env": {
                "type": "string",
                "title": "Environment",
                "enum": ["stg", "prod"],
                "enumNames": ["Staging", "Production"],
            },
            "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 10},
            "notify": {"type": "boolean", "title": "Notify the team", "default": True},
            "regions": {
                "type": "array",
                "title": "Regions",
                "items": {"type": "string", "enum": ["eu", "us", "ap"]},
                "maxItems": 2,
            },
            "owner": {"type": "string", "title": "Owner", "format": "email"},
        },
        "required": ["env", "replicas"],
    },
}
LONG: dict[str, Any] = {
    "kind": "form",
    "message": "New service",
    "requested_schema": {
        "type": "object",
        "properties": {f"f{index}": {"type": "string", "title": f"Field {index}"} for index in range(1, 8)},
        "required": ["f1", "f7"],
    },
}
CONNECT: dict[str, Any] = {
    "kind": "url",
    "message": "Connect your GitHub account",
    "url": "https://example.com/connect",
}


async def ask(fake: FakeDiscord, runtime: Runtime, payload: dict[str, Any]) -> tuple[Prompt, dict[str, Any]]:
    """Raise ``payload`` in a run Alice started; the prompt, and the message the bot posted for it."""
    run_id = await start_run(runtime.gateway)
    prompt = await runtime.gateway.raise_prompt(run_id, PromptRequest.model_validate(payload))
    return prompt, fake.posted(CHANNEL_ID)[-1]


async def press(fake: FakeDiscord, message: dict[str, Any], label: str, user: int = ALICE) -> Interaction:
    return await fake.answered(await fake.press(message, label, user_id=user, guild_id=GUILD_ID))


async def submit(fake: FakeDiscord, opened: Interaction, answers: dict[str, str | list[str]]) -> Interaction:
    return await fake.answered(await fake.submit_form(opened, answers))


async def settled(runtime: Runtime, prompt: Prompt) -> Prompt:
    done = await runtime.gateway.wait_prompt(prompt.prompt_id, timeout=5)
    assert not done.pending, done
    return done


async def pending(runtime: Runtime, prompt: Prompt) -> bool:
    return (await runtime.gateway.get_prompt(prompt.prompt_id)).prompt_state is PromptState.PENDING


def labels(message: dict[str, Any]) -> list[str]:
    return [control["label"] for control in FakeDiscord.controls(message)]


# Forms ---------------------------------------------------------------------------------------------


async def test_tool_asks_a_flat_form_and_the_person_submits_it_in_a_modal(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    prompt, message = await ask(fake, runtime, DEPLOY)
    assert message["content"].startswith("Deploy settings\n\n1. Environment (env) — string: pick one")
    assert labels(message) == [FILL_IN, DECLINE]

    opened = await press(fake, message, FILL_IN)
    form = opened.form
    assert form is not None and form["title"] == "Deploy settings"
    assert [field["label"] for field in form["components"]] == [
        "Environment",
        "Replicas",
        "Notify the team",
        "Regions",
        "Owner",
    ]
    given: dict[str, str | list[str]] = {
        "Environment": "Production",
        "Replicas": "3",
        "Regions": ["eu", "ap"],
        "Owner": "ada@example.com",
    }
    submitted = await submit(fake, opened, given)

    done = await settled(runtime, prompt)
    assert done.prompt_state is PromptState.ANSWERED
    assert done.content == {
        "env": "prod",
        "replicas": 3,
        "notify": True,  # its default, filled in by the form and kept
        "regions": ["eu", "ap"],
        "owner": "ada@example.com",
    }
    assert submitted.private
    assert submitted.notice == "Your answer was recorded: Production · 3 · Yes · eu, ap · ada@example.com"
    await fake.wait_for(lambda: fake.edits)
    audit = fake.posted(CHANNEL_ID)[-1]
    assert audit["content"] == (
        "✓ Answered:\nEnvironment: Production\nReplicas: 3\nNotify the team: Yes\nRegions: eu, ap\n"
        f"Owner: ada@example.com\n-# Answered by <@{ALICE}>"
    )
    assert fake.message(message["id"])["components"] == []


async def test_an_invalid_value_gets_a_notice_naming_the_constraint_and_the_form_stays_pending(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    prompt, message = await ask(fake, runtime, DEPLOY)
    opened = await press(fake, message, FILL_IN)
    refused = await submit(fake, opened, {"Environment": "Staging", "Replicas": "12", "Owner": "ada"})

    assert refused.private and refused.notice == (
        "Not taken: Replicas must be at most 10 (maximum 10); Owner must be an email address (format email). "
        "The form is still open."
    )
    assert await pending(runtime, prompt)

    reopened = await press(fake, refused.reply, CHANGE_ANSWERS)
    assert reopened.form is not None
    shown = {f["label"]: f["component"] for f in reopened.form["components"]}
    assert shown["Replicas"]["value"] == "12"  # what was given comes back, to be corrected
    assert [o["label"] for o in shown["Environment"]["options"] if o.get("default")] == ["Staging"]
    await submit(fake, reopened, {"Replicas": "2", "Owner": ""})

    done = await settled(runtime, prompt)
    assert done.content == {"env": "stg", "replicas": 2, "notify": True}  # nothing picked: no value


async def test_a_form_longer_than_a_modal_is_filled_in_pages_kept_as_a_draft(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    prompt, message = await ask(fake, runtime, LONG)
    first = await press(fake, message, FILL_IN)
    assert first.form is not None and first.form["title"] == "New service (1/2)"
    assert [f["label"] for f in first.form["components"]] == [f"Field {i}" for i in range(1, 6)]

    kept = await submit(fake, first, {"Field 1": "api", "Field 3": "go"})
    assert kept.notice == "Fields 1–5 of 7 are kept. Continue with the rest:"
    assert await pending(runtime, prompt)
    second = await press(fake, kept.reply, "Continue: fields 6–7…")
    assert second.form is not None and second.form["title"] == "New service (2/2)"
    assert [f["label"] for f in second.form["components"]] == ["Field 6", "Field 7"]
    await submit(fake, second, {"Field 7": "eu"})

    done = await settled(runtime, prompt)
    assert done.content == {"f1": "api", "f3": "go", "f7": "eu"}


async def test_the_person_declines_the_form_with_its_decline_button(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    prompt, message = await ask(fake, runtime, DEPLOY)
    declined = await press(fake, message, DECLINE)

    done = await settled(runtime, prompt)
    assert (done.prompt_state, done.reason_code) == (PromptState.CANCELLED, ReasonCode.DECLINED)
    assert declined.private and declined.notice == notices.DECLINED


async def test_a_stranger_can_neither_submit_nor_decline_the_form(
    fake: FakeDiscord, runtime: Runtime
) -> None:
    prompt, message = await ask(fake, runtime, LONG)
    opened = await press(fake, message, FILL_IN, user=BOB)
    page = await submit(fake, opened, {"Field 1": "mine"})
    declined = await press(fake, message, DECLINE, user=BOB)

    assert page.notice == notices.NOT_ALLOWED and declined.notice == notices.NOT_ALLOWED
    assert await pending(runtime, prompt)
    draft = f"discord-form:{prompt.prompt_id}:{BOB}"
    assert await runtime.gateway.get_draft(prompt.thread_id, draft) == {}


async def test_the_person_answers_the_form_by_typed_reply(fake: FakeDiscord, runtime: Runtime) -> None:
    prompt, _ = await ask(fake, runtime, DEPLOY)
    await fake.person_says(CHANNEL_ID, ALICE, "Environment: stg\nreplicas: 0", guild_id=GUILD_ID)
    notice = await eventually(lambda: [m for m in fake.messages if "minimum 1" in m["content"]])
    assert "Replicas must be at least 1 (minimum 1)" in notice[0]["content"]
    assert await pending(runtime, prompt)

    await fake.person_says(CHANNEL_ID, ALICE, "Environment: stg\nreplicas: 4\nnotify: yes", guild_id=GUILD_ID)

    done = await settled(runtime, prompt)  # every required field has a value: the rest is left empty
    assert done.content == {"env": "stg", "replicas": 4, "notify": True}


# URL steps -----------------------------------------------------------------------------------------


async def test_require_url_step_done_by_button(fake: FakeDiscord, runtime: Runtime) -> None:
    prompt, message = await ask(fake, runtime, CONNECT)
    assert message["content"] == "Connect your GitHub account\nhttps://example.com/connect"
    [link, done_button, decline] = FakeDiscord.controls(message)
    assert (link["label"], link["style"], link["url"]) == (OPEN_PAGE, 5, "https://example.com/connect")
    assert [done_button["label"], decline["label"]] == [DONE, DECLINE]

    pressed = await press(fake, message, DONE)

    done = await settled(runtime, prompt)
    assert [answer.answer for answer in done.answers or []] == [["done"]]
    assert pressed.private and pressed.notice == "Your answer was recorded: done"


async def test_require_url_step_done_by_typed_reply(fake: FakeDiscord, runtime: Runtime) -> None:
    prompt, _ = await ask(fake, runtime, CONNECT)
    await fake.person_says(CHANNEL_ID, ALICE, "Done", guild_id=GUILD_ID)

    done = await settled(runtime, prompt)
    assert [answer.answer for answer in done.answers or []] == [["done"]]


async def test_require_url_step_declined_by_button(fake: FakeDiscord, runtime: Runtime) -> None:
    prompt, message = await ask(fake, runtime, CONNECT)
    await press(fake, message, DECLINE)

    done = await settled(runtime, prompt)
    assert (done.prompt_state, done.reason_code) == (PromptState.CANCELLED, ReasonCode.DECLINED)


async def test_a_stranger_cannot_finish_a_url_step(fake: FakeDiscord, runtime: Runtime) -> None:
    prompt, message = await ask(fake, runtime, CONNECT)
    pressed = await press(fake, message, DONE, user=BOB)
    await fake.person_says(CHANNEL_ID, BOB, "done", guild_id=GUILD_ID)

    assert pressed.notice == notices.NOT_ALLOWED
    await fake.wait_for(lambda: len(fake.calls_to("POST", "/messages")) >= 2)  # Bob's DM about his reply
    assert await pending(runtime, prompt)
