"""Who owns a thread, and what a token scoped to some agents may do there (pure rules)."""

from __future__ import annotations

import pytest

from gateway.rules.ownership import ThreadOwners, claimants, covers, message_reaches, thread_open_to

OPS = frozenset({"ops"})
NOBODY = ThreadOwners(frozenset(), frozenset())
OPS_RUN = ThreadOwners(frozenset({"ops"}), frozenset())
DEPLOY_CLAIM = ThreadOwners(frozenset(), frozenset({"deploy"}))


@pytest.mark.parametrize(
    ("channel", "thread_id", "expected"),
    [
        ("slack:C0456", "slack:C0456:1712345678.000100", True),
        ("slack:C0456", "slack:C04567:1712345678.000100", False),
        ("telegram:-100123", "telegram:-100123:7", True),
        ("web:lobby", "web:lobby", True),
        ("web:lobby", "web:lobby-3f2a", False),
    ],
)
def test_a_claimed_channel_covers_the_threads_under_it(channel: str, thread_id: str, expected: bool) -> None:
    assert covers(channel, thread_id) is expected


def test_claimants_are_the_agents_claiming_a_channel_that_covers_the_thread() -> None:
    claims = {"ops": ("slack:C0456",), "deploy": ("slack:C0999", "web:lobby")}
    assert claimants(claims, "slack:C0456:1.0") == {"ops"}
    assert claimants(claims, "discord:123456") == frozenset()


@pytest.mark.parametrize(
    ("owners", "reaches", "open_"),
    [
        (NOBODY, True, True),  # nobody owns it: the one-tenant default
        (OPS_RUN, True, True),
        (ThreadOwners(frozenset({"deploy"}), frozenset()), True, False),  # unclaimed: heard, not entered
        (DEPLOY_CLAIM, False, False),
        (ThreadOwners(frozenset({"ops"}), frozenset({"deploy"})), True, True),
    ],
)
def test_a_token_hears_and_enters_threads_its_agents_own(
    owners: ThreadOwners, reaches: bool, open_: bool
) -> None:
    assert message_reaches(OPS, owners) is reaches
    assert thread_open_to(OPS, owners) is open_
    assert message_reaches(None, owners) and thread_open_to(None, owners)  # a token acting for every agent
