"""Claim or release a prompt on a person's behalf (contract §11): the refusals in the answer routes' order
(who may answer 403, then a settled prompt 409), then the claim itself (``gateway.decision.claiming``)."""

from __future__ import annotations

from collections.abc import Collection

from gateway.base.errors import GatewayError, not_found
from gateway.base.models import Prompt
from gateway.decision.answering.refusals import Sees, already_resolved, check_may_answer
from gateway.decision.claiming import claimed_error
from gateway.decision.service import Gateway
from gateway.store.results import SettlementStatus


async def claim_for(
    gateway: Gateway,
    prompt_id: str,
    identity: str | None,
    *,
    sees: Sees,
    asserted_by: str | None = None,
    groups: Collection[str] = (),
    release: bool = False,
    operator: bool = False,
) -> Prompt:
    """Claim ``prompt_id`` for ``identity`` (someone who may answer it), or ``release`` it: the prompt as
    it now stands. Someone else's claim is 409 CLAIMED, except that an ``operator`` releases any claim
    (with or without ``from``)."""
    prompt = await gateway.store.get_prompt(prompt_id)
    if prompt is None or not sees(prompt.agent):
        raise not_found("PROMPT_NOT_FOUND", "prompt", prompt_id)
    force = release and operator
    if not force:
        identity = await check_may_answer(gateway, prompt, identity, asserted_by, groups)
    if not prompt.pending:
        raise await already_resolved(gateway, "ALREADY_RESOLVED", prompt)
    claimed = await gateway.claim(prompt, identity, release=release, force=force)
    if claimed.status is SettlementStatus.CLAIMED:
        raise claimed_error(prompt, claimed.holder, claimed.until_ms)
    if claimed.status is SettlementStatus.SETTLED and claimed.prompt is not None:
        raise await already_resolved(gateway, "ALREADY_RESOLVED", claimed.prompt)
    if claimed.status is not SettlementStatus.OK:
        raise GatewayError("PROMPT_NOT_FOUND", f"No prompt with id {prompt_id!r}.", 404)
    return await gateway.get_prompt(prompt_id)
