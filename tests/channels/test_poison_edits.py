"""An edit the store cannot keep (a lone surrogate escaped in typed JSON, nesting past a body's limit) is
"not taken" on every platform path, end to end: the approval stays open and the platform gets a 2xx, so
nothing is retried and no one is told to try again. The real slack-bolt and the Teams SDK against fakes."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from channels.slack.controls import EDIT_AND_APPROVE
from channels.teams.approvals import SEND_EDIT
from gateway.base.models import PromptState
from gateway.rules import notices
from tests.channels.slack_support import SlackGateway, slack_gateway
from tests.channels.teams_support import IN_CHANNEL, TeamsGateway, fake_bot_framework, teams_gateway
from tests.channels.test_slack_decisions import DEPLOY as SLACK_DEPLOY
from tests.channels.test_slack_decisions import ask, handled, now, open_modal, submit
from tests.channels.test_teams_decisions import DEPLOY as TEAMS_DEPLOY
from tests.channels.test_teams_decisions import THREAD as TEAMS_THREAD
from tests.fakes.slack import FakeSlack

TYPED = [
    pytest.param('edit {"service": "web \\ud800", "replicas": 2}', id="lone-surrogate"),
    pytest.param('edit {"service": "\\udfff"}', id="low-surrogate"),
    pytest.param('edit {"service": ' + "[" * 900 + "]" * 900 + "}", id="nested-900"),
    pytest.param('edit {"regions": ' + "[" * 40 + "]" * 40 + "}", id="nested-40"),
    pytest.param('regions: ["\\ud800"]', id="line-surrogate"),
]
# A form input typed as JSON (an argument that is a list), as a modal or a card sends it back.
FORM_VALUES = [
    pytest.param('["\\ud800"]', id="lone-surrogate"),
    pytest.param("[" * 900 + "]" * 900, id="nested-900"),
    pytest.param("[" * 40 + "]" * 40, id="nested-40"),
]


@pytest.fixture
async def slack(fake_slack: FakeSlack, real_redis: str) -> AsyncIterator[SlackGateway]:
    async with slack_gateway(fake_slack, real_redis) as gateway:
        yield gateway


@pytest.fixture
async def teams(real_redis: str) -> AsyncIterator[TeamsGateway]:
    async with fake_bot_framework() as fake, teams_gateway(fake, real_redis) as gateway:
        yield gateway


@pytest.mark.parametrize("text", TYPED)
async def test_slack_events_a_typed_poison_edit_is_acknowledged_and_not_taken(
    slack: SlackGateway, text: str
) -> None:
    prompt, message = await ask(slack, SLACK_DEPLOY)
    assert await slack.deliver(slack.reply(message["thread_ts"], text)) == 200
    await handled(slack)
    still = await now(slack, prompt)
    assert (still.prompt_state, still.approved_call) == (PromptState.PENDING, None)
    assert any(text.startswith("Not taken: ") for text in slack.fake.private_notices())


@pytest.mark.parametrize("value", FORM_VALUES)
async def test_slack_edit_modal_with_a_poison_value_shows_why_under_the_input(
    slack: SlackGateway, value: str
) -> None:
    prompt, message = await ask(slack, SLACK_DEPLOY)
    view = await open_modal(slack, message, EDIT_AND_APPROVE)
    answer = await submit(slack, view, {"regions": value})
    assert answer["response_action"] == "errors"
    assert notices.TRY_AGAIN not in answer["errors"]["a3"]
    assert (await now(slack, prompt)).pending


@pytest.mark.parametrize("text", TYPED)
async def test_teams_a_typed_poison_edit_is_acknowledged_and_not_taken(
    teams: TeamsGateway, text: str
) -> None:
    prompt = await teams.ask(TEAMS_THREAD, TEAMS_DEPLOY.model_copy(deep=True))
    response = await teams.say(IN_CHANNEL, text)
    assert response.status_code < 300, response.text
    await teams.settled()
    still = await teams.prompt(prompt.prompt_id)
    assert (still.prompt_state, still.approved_call) == (PromptState.PENDING, None)


@pytest.mark.parametrize("value", FORM_VALUES)
async def test_teams_edit_card_with_a_poison_value_is_not_taken(teams: TeamsGateway, value: str) -> None:
    prompt = await teams.ask(TEAMS_THREAD, TEAMS_DEPLOY.model_copy(deep=True))
    reply = await teams.press(teams.card_of(prompt), SEND_EDIT, inputs={"a3": value})
    assert reply["value"].startswith("Not taken: "), reply
    assert reply["value"] != notices.TRY_AGAIN
    still = await teams.prompt(prompt.prompt_id)
    assert (still.prompt_state, still.approved_call) == (PromptState.PENDING, None)
