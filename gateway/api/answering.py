"""People's answers over REST (seeds 002 and 003): the caller's token scope handed to the core's rules."""

from __future__ import annotations

from functools import partial
from typing import Annotated

from fastapi import Depends, Request

from gateway.api.auth import PERSON, Caller, Principal
from gateway.api.scope import visible
from gateway.api.signin import PERSON_STATE_KEY
from gateway.decision.answering import inputs as core_inputs
from gateway.decision.answering import respond as core_respond
from gateway.decision.answering.bodies import InputAction, RespondBody, RespondResult
from gateway.decision.answering.inputs import Acted
from gateway.decision.service import Gateway
from gateway.people.signin import SignedIn


def session_groups(request: Request, caller: Caller) -> tuple[str, ...]:
    """The groups a signed-in person's session vouches for (the directory's and the identity provider's
    groups claim). None for a token: its ``from`` names an identity, never the groups it is in."""
    if caller.role != PERSON:
        return ()
    person = getattr(request.state, PERSON_STATE_KEY, None)
    return person.groups if isinstance(person, SignedIn) else ()


SessionGroups = Annotated[tuple[str, ...], Depends(session_groups)]


async def act_on_input(
    gateway: Gateway,
    caller: Principal,
    agent: str,
    prompt_id: str,
    action: InputAction,
    groups: tuple[str, ...] = (),
) -> Acted:
    """Accept, decline or cancel an input for ``from``, as the caller's token may (the core's rules)."""
    return await core_inputs.act_on_input(
        gateway,
        agent,
        prompt_id,
        action,
        sees=partial(visible, caller),
        asserted_by=_asserter(caller),
        groups=_own(caller, groups),
    )


async def respond(
    gateway: Gateway,
    caller: Principal,
    run_id: str,
    thread_id: str,
    prompt_id: str,
    body: RespondBody,
    identity: str | None,
    groups: tuple[str, ...] = (),
) -> RespondResult:
    """Answer or skip a pending prompt of a run's thread, as the caller's token may (``respond.respond``)."""
    sees = partial(visible, caller)
    return await core_respond.respond(
        gateway,
        run_id,
        thread_id,
        prompt_id,
        body,
        identity,
        sees=sees,
        asserted_by=_asserter(caller),
        groups=_own(caller, groups),
    )


def _asserter(caller: Principal) -> str | None:
    """Who vouches for the identity an answer names: an operator token's name; nobody for a signed-in
    person's session, which answers as that person only."""
    return None if caller.role == PERSON else caller.name


def _own(caller: Principal, groups: tuple[str, ...]) -> tuple[str, ...]:
    """Groups count only for a session, which answers as its own person."""
    return groups if caller.role == PERSON else ()
