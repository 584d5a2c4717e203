"""What a refused answer tells the caller: who may not answer (403), how a settled prompt settled (409)."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from gateway.base.errors import GatewayError
from gateway.base.models import Prompt, PromptState
from gateway.decision.service import Gateway
from gateway.rules.authz import may_answer, requires_sign_in

# Whether the caller may see an agent's runs and prompts (the API asks its token's scope): one it may
# not see does not exist for it.
Sees = Callable[[str], bool]


async def settled_details(gateway: Gateway, prompt: Prompt) -> dict[str, Any]:
    """State, answers or reason, who and when: what a 409 tells the caller about the earlier outcome."""
    details: dict[str, Any] = {
        "prompt_id": prompt.prompt_id,
        "state": prompt.prompt_state.value,
        "settled_at": prompt.settled_at.isoformat() if prompt.settled_at else None,
    }
    if prompt.prompt_state is PromptState.ANSWERED:
        details["answers"] = [answer.model_dump(mode="json") for answer in prompt.answers or []]
        details["by"] = prompt.answered_by
        details["resolution"] = prompt.resolution.value if prompt.resolution else None
    else:
        details["reason"] = prompt.reason
        details["reason_code"] = prompt.reason_code.value if prompt.reason_code else None
        field = await gateway.store.get_prompt_field(prompt.thread_id, prompt.prompt_id, "cancelled_by")
        details["by"] = field or None
    return details


async def already_resolved(gateway: Gateway, code: str, prompt: Prompt) -> GatewayError:
    details = await settled_details(gateway, prompt)
    how = f"answered by {details['by']}" if prompt.prompt_state is PromptState.ANSWERED else "cancelled"
    if prompt.prompt_state is PromptState.CANCELLED and prompt.reason:
        how = f"cancelled ({prompt.reason})"
    message = f"Prompt {prompt.prompt_id} was already {how}; details say how it settled."
    return GatewayError(code, message, 409, details)


def _forbidden(prompt: Prompt, identity: str | None) -> GatewayError:
    if not identity:
        message = "Say who is answering: name a person allowed to answer (the run's starter or an approver)."
    else:
        message = (
            f"{identity} may not answer this prompt: only the run's starter and the agent's approvers can."
        )
    return GatewayError("FORBIDDEN", message, 403, {"prompt_id": prompt.prompt_id})


async def check_may_answer(
    gateway: Gateway,
    prompt: Prompt,
    identity: str | None,
    asserted_by: str | None = None,
    groups: Collection[str] = (),
) -> str:
    """The person answering, or 403 FORBIDDEN unless they may answer ``prompt`` (its run's starter and
    the agent's approvers may; ``groups``: a signed-in person's, see ``may_answer``). An answer an
    operator token asserts (``from``; ``asserted_by`` the token's name) is 403 SIGN_IN_REQUIRED on an
    agent that takes answers from signed-in people only."""
    if asserted_by is not None and await requires_sign_in(gateway.store, prompt.agent):
        raise GatewayError(
            "SIGN_IN_REQUIRED",
            f"Agent {prompt.agent} takes answers only from people signed in (a session or a chat "
            "platform's own sign-in); an operator token cannot answer for someone with from.",
            403,
            {"prompt_id": prompt.prompt_id, "agent": prompt.agent},
        )
    if not identity or not await may_answer(gateway.store, prompt, identity, groups):
        raise _forbidden(prompt, identity)
    return identity


def already_voted(prompt: Prompt, identity: str) -> GatewayError:
    """409 ALREADY_VOTED: the person's vote was recorded before; votes so far in details."""
    return GatewayError(
        "ALREADY_VOTED",
        f"{identity} has already voted on prompt {prompt.prompt_id}; it needs another approver.",
        409,
        {
            "prompt_id": prompt.prompt_id,
            "approvals": prompt.approvals,
            "votes": [vote.model_dump(mode="json") for vote in prompt.votes],
        },
    )
