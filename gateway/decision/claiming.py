"""Claims (contract §11): one person takes a pending prompt for a while, and until then only they answer.

The rule itself is the store's, in the one answer script every path takes (``held_by_other`` in
``_lib.lua``: a chat reply, a control, REST, MCP); here a claim is made or released, and what it means is
said: the 409 an API caller gets, the notice a person in a chat gets.
"""

from __future__ import annotations

from gateway.base.errors import GatewayError
from gateway.base.logs import event
from gateway.base.models import Prompt, from_ms
from gateway.decision.service_base import ServiceBase
from gateway.rules import notices
from gateway.store.results import Claimed, ClaimRequest

DEFAULT_CLAIM_SECONDS = 900  # THREADGATE_CLAIM_SECONDS
PERSON_PREFIX = "person:"
CLAIM_WORD = "claim"


def claimed_error(prompt: Prompt, holder: str | None = None, until_ms: int | None = None) -> GatewayError:
    """409 CLAIMED: someone else holds ``prompt``; details say who and until when."""
    who = holder or prompt.claimed_by
    until = from_ms(until_ms) if until_ms is not None else prompt.claimed_until
    return GatewayError(
        "CLAIMED",
        f"Prompt {prompt.prompt_id} is claimed by {who}; only they can answer it until the claim ends "
        "or is released.",
        409,
        {
            "prompt_id": prompt.prompt_id,
            "claimed_by": who,
            "claimed_until": until.isoformat() if until is not None else None,
        },
    )


class Claiming(ServiceBase):
    """Claim and release a prompt; say who holds one."""

    claim_seconds: int = DEFAULT_CLAIM_SECONDS

    async def claimant(self, identity: str) -> tuple[str, str, str]:
        """What a claim by ``identity`` records: (``person:<id>`` where the directory knows their person,
        else the identity; the identity when it names the person, else ''; their name)."""
        if identity.startswith(PERSON_PREFIX):
            return identity, "", await self.holder_name(identity)
        person = await self.store.people.whois(identity)
        if person is None:
            return identity, "", identity
        return f"{PERSON_PREFIX}{person.person}", identity, person.name or person.person

    async def holder_name(self, holder: str) -> str:
        """How a chat names a claim's holder: the directory's name of their person, else as recorded."""
        if holder.startswith(PERSON_PREFIX):
            found = await self.store.people.get(holder.removeprefix(PERSON_PREFIX))
            return (found.name or found.person) if found is not None else holder.removeprefix(PERSON_PREFIX)
        person = await self.store.people.whois(holder)
        return (person.name or person.person) if person is not None else holder

    async def claim(
        self, prompt: Prompt, identity: str | None, *, release: bool = False, force: bool = False
    ) -> Claimed:
        """Claim ``prompt`` for ``identity`` (renewing their own claim), or ``release`` it: refused while
        someone else holds it, unless ``force`` (an operator's release). The thread is told once who took
        it; ``input.claimed`` goes out on each change of holder. Who may claim is the caller's to check
        (``may_answer``)."""
        who, alt, name = await self.claimant(identity) if identity else ("", "", "")
        now_ms = self.now_ms()
        hold = ClaimRequest(
            who=who,
            alt=alt,
            until_ms=now_ms + self.claim_seconds * 1000,
            release=release,
            force=force,
            notice="" if release else notices.on_it(name),
        )
        claimed = await self.store.claim(prompt.thread_id, prompt.prompt_id, hold, now_ms)
        if claimed.changed:
            self.outbox.kick(prompt.thread_id)
            event(
                "prompt.released" if release else "prompt.claimed",
                prompt_id=prompt.prompt_id,
                thread_id=prompt.thread_id,
                run_id=prompt.run_id,
            )
        return claimed

    async def claimed_notice(self, prompt: Prompt | None) -> str:
        """What anyone but the holder is told: ``Alice is on it until 14:05``."""
        if prompt is None or not prompt.claimed_by or prompt.claimed_until is None:
            return notices.CLAIMED_BY_ANOTHER
        return notices.on_it_until(await self.holder_name(prompt.claimed_by), prompt.claimed_until)


def claim_typed(text: str) -> bool:
    """Whether a chat message is ``claim``: take the thread's open prompt."""
    return text.strip().lower() == CLAIM_WORD
