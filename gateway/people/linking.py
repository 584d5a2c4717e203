"""Linking a chat identity to a person with a one-time code (contract §10).

A signed-in person asks for a code (``new_link_code``); typing ``link <code>`` from a chat identity links
that identity to them (``link_from_chat``). Codes are single use, live ten minutes, and a person may ask for
a few per window. The message itself is never queued for agents: the code is nobody else's business. On a
platform with direct messages it is taken only in one; typed where others read it, it is spent unused.
"""

from __future__ import annotations

import re
import secrets

from gateway.base.errors import GatewayError
from gateway.store.people import LinkStatus, PeopleStore

CODE_TTL_MS = 10 * 60 * 1000
CODES_PER_WINDOW = 5  # codes a person may ask for per window
CODE_WINDOW_MS = 10 * 60 * 1000
# Crockford's base 32: no I, L, O or U, so a code read aloud or retyped is not mistaken.
ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
LINK_COMMAND = re.compile(r"\s*link\s+([0-9A-Za-z]{4})-?([0-9A-Za-z]{4})\s*", re.IGNORECASE | re.ASCII)

LINKED = "Linked: {identity} is now {person}'s. Answers from here count as theirs."
CODE_UNKNOWN = "That link code is not valid (it may have expired after 10 minutes); ask for a new one."
CODE_USED = "That link code was already used; ask for a new one."
IDENTITY_TAKEN = "{identity} already belongs to someone else; an operator can unlink it first."
CODE_EXPOSED = (
    "Send link codes to me in a direct message, not where others can read them. "
    "This code was seen here, so it no longer works: ask for a new one and send it to me in a direct message."
)


def new_code() -> str:
    """Eight random characters of ``ALPHABET`` as ``XXXX-XXXX`` (40 bits)."""
    chars = "".join(secrets.choice(ALPHABET) for _ in range(8))
    return f"{chars[:4]}-{chars[4:]}"


def link_code_in(text: str) -> str | None:
    """The code of a ``link <code>`` message, normalised (upper case, with its dash); None otherwise."""
    match = LINK_COMMAND.fullmatch(text or "")
    return f"{match.group(1)}-{match.group(2)}".upper() if match else None


async def new_link_code(people: PeopleStore, person: str) -> str:
    """A one-time code that links the chat identity typing ``link <code>`` to ``person``: 404
    PERSON_NOT_FOUND without such a person, 429 RATE_LIMITED after ``CODES_PER_WINDOW`` in a window."""
    code = new_code()
    status, wait_ms = await people.new_code(person, code, CODE_TTL_MS, CODES_PER_WINDOW, CODE_WINDOW_MS)
    if status is LinkStatus.MISSING:
        raise GatewayError("PERSON_NOT_FOUND", f"No person {person!r} in the directory.", 404)
    if status is LinkStatus.LIMITED:
        retry = max(1, -(-wait_ms // 1000))
        raise GatewayError(
            "RATE_LIMITED",
            f"Too many link codes asked for; try again in {retry} s.",
            429,
            {"retry_after": retry},
        )
    return code


async def link_from_chat(people: PeopleStore, code: str, identity: str, *, shared: bool = False) -> str:
    """Spend ``code`` from ``identity``: what to tell the person (linked, or why not). A code typed in a
    ``shared`` conversation (others could read it, and the platform has direct messages) links nothing and
    is spent: whoever read it cannot use it either."""
    status, who = await people.use_code(code, identity, exposed=shared)
    if status is LinkStatus.EXPOSED:
        return CODE_EXPOSED
    if status is LinkStatus.OK:
        return LINKED.format(identity=identity, person=f"person:{who}")
    if status is LinkStatus.USED:
        return CODE_USED
    if status is LinkStatus.TAKEN:
        return IDENTITY_TAKEN.format(identity=identity)
    return CODE_UNKNOWN
