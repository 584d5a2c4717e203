"""The acts both answer routes share: cancel on a person's behalf, and check and record the grant an
approve asks for."""

from __future__ import annotations

from typing import Any

from gateway.base.errors import GatewayError
from gateway.base.models import Prompt, PromptKind, ReasonCode, ToolCall
from gateway.decision.claiming import claimed_error
from gateway.decision.granting import check_grant, not_recorded, record_grant
from gateway.decision.service import Gateway, edited_call
from gateway.rules.grants import Grant, GrantRequest
from gateway.store.results import SettlementStatus


async def cancel_for(
    gateway: Gateway, prompt: Prompt, identity: str, reason: str, code: ReasonCode
) -> tuple[bool, Prompt]:
    """Cancel on a person's behalf. Returns (this call cancelled it, the prompt as it now stands)."""
    settlement = await gateway.cancel_prompt(prompt.prompt_id, reason, code, by=identity)
    if settlement.ok:
        return True, await gateway.get_prompt(prompt.prompt_id)
    if settlement.status is SettlementStatus.CLAIMED:
        raise claimed_error(await gateway.get_prompt(prompt.prompt_id))
    if settlement.prompt is None:
        raise GatewayError("PROMPT_NOT_FOUND", f"No prompt with id {prompt.prompt_id!r}.", 404)
    return False, settlement.prompt


def checked_grant(
    prompt: Prompt, grant: GrantRequest | None, approving: bool, arguments: dict[str, Any] | None
) -> None:
    """The one check of a ``grant`` on a REST answer, before anything is answered: against the call being
    approved, which is the call as edited when ``arguments`` edit it."""
    if grant is None:
        return
    edited: ToolCall | None = None
    if approving and arguments is not None and prompt.kind is PromptKind.APPROVAL:
        edited = edited_call(prompt, arguments)
    check_grant(prompt, grant, approving=approving, call=edited)


async def made_grant(
    gateway: Gateway, settled: Prompt, identity: str, grant: GrantRequest
) -> tuple[Grant | None, dict[str, str] | None]:
    """Record the grant an approve that settled ``settled`` asked for: the grant, or why none was made."""
    recorded = await record_grant(gateway.store, settled, identity, grant, gateway.now_ms())
    if isinstance(recorded, Grant):
        return recorded, None
    why = not_recorded(recorded)
    return None, {"reason": recorded.value, "message": f"Approved without a grant: {why}."}
