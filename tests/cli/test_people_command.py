"""``threadgate people``: the directory from a terminal, over the HTTP API."""

from __future__ import annotations

from tests.cli.conftest import Cli

SLACK, TEAMS = "slack:U0DANA", "teams:8f2c1d4e-1111-2222-3333-444455556666"


async def test_add_link_unlink_show_and_remove_a_person(cli: Cli) -> None:
    added = await cli("people", "add", "dana", SLACK, "--name", "Dana", "--group", "sre", "--json")
    assert added.code == 0, added.err
    assert added.json() == {
        "person": "dana",
        "name": "Dana",
        "email": None,
        "identities": [SLACK],
        "groups": ["sre"],
    }
    linked = await cli("people", "link", "person:dana", TEAMS, "--json")
    assert linked.json()["identities"] == sorted([SLACK, TEAMS])
    assert linked.json()["groups"] == ["sre"], "linking keeps the rest of the person"
    unlinked = await cli("people", "unlink", "dana", SLACK, "--json")
    assert unlinked.json()["identities"] == [TEAMS]
    shown = await cli("people", "show", "dana")
    assert shown.code == 0 and "person:dana  Dana" in shown.out and TEAMS in shown.out
    listed = await cli("people", "list", "--json")
    assert [person["person"] for person in listed.json()["items"]] == ["dana"]
    removed = await cli("people", "remove", "dana")
    assert removed.code == 0 and "Removed person:dana" in removed.out
    missing = await cli("people", "show", "dana")
    assert missing.code == 5 and "PERSON_NOT_FOUND" in missing.err


async def test_an_identity_of_someone_else_is_a_conflict(cli: Cli) -> None:
    await cli("people", "add", "dana", SLACK)
    taken = await cli("people", "add", "erin", SLACK)
    assert taken.code == 6 and "IDENTITY_TAKEN" in taken.err


async def test_bad_arguments_are_usage_errors_sent_nowhere(cli: Cli) -> None:
    assert (await cli("people", "add", "Not Valid")).code == 2
    assert (await cli("people", "link", "dana", "bogus:1")).code == 2


async def test_an_agent_token_cannot_read_the_directory(cli: Cli) -> None:
    refused = await cli("people", "list", token="agent")
    assert refused.code == 4 and "FORBIDDEN" in refused.err


async def test_approvers_take_people_and_groups(cli: Cli) -> None:
    ran = await cli("approvers", "add", "ops", "person:dana", "group:sre", "--json")
    assert ran.code == 0, ran.err
    assert set(ran.json()["approvers"]) >= {"person:dana", "group:sre"}
