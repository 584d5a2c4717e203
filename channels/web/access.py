"""Who a web chat visitor is (a chosen name in demo mode, a configured token otherwise), and which rooms
they may read."""

from __future__ import annotations

import hmac
import re
from dataclasses import dataclass

from gateway.sdk import OPERATOR, Audiences, Reader, TokenTable

NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}", re.ASCII)


class SignInError(Exception):
    """Sign-in refused; the message says what to do."""


@dataclass(frozen=True, slots=True)
class _Entry:
    token: bytes
    name: str | None  # None: the token's holder picks a name


def parse_tokens(raw: str) -> list[_Entry]:
    """``THREADGATE_WEB_TOKEN``: comma-separated ``name:token`` (that token signs in as ``web:name``)
    or bare ``token`` entries (its holder picks a name, like a room password)."""
    entries: list[_Entry] = []
    for index, part in enumerate(filter(None, (piece.strip() for piece in raw.split(","))), start=1):
        name, sep, token = part.partition(":")
        if not sep:
            entries.append(_Entry(part.encode(), None))
            continue
        if not NAME.fullmatch(name) or not token:
            raise ValueError(
                f"THREADGATE_WEB_TOKEN entry {index} is not name:token (name of letters, digits, . _ -) "
                "or a bare token"
            )
        entries.append(_Entry(token.encode(), name))
    return entries


class WebAccess:
    """The sign-in rule. ``open`` (no tokens) means anyone who reaches the page picks a name."""

    def __init__(self, tokens: str | None = None) -> None:
        self._entries = parse_tokens(tokens) if tokens else []
        # Compared case-insensitively, so a room-token holder cannot pass as ``Alice`` for ``alice``.
        self._bound = frozenset(entry.name.casefold() for entry in self._entries if entry.name is not None)

    @property
    def open(self) -> bool:
        return not self._entries

    def may_read(self, token: str | None) -> bool:
        """Reading the chat needs any valid token (or none, when sign-in is open)."""
        return self.open or self._match(token) is not None

    def _match(self, token: str | None) -> _Entry | None:
        presented = (token or "").encode("utf-8", "surrogateescape")
        found: _Entry | None = None
        for entry in self._entries:  # compare against every token, so timing says nothing
            if hmac.compare_digest(entry.token, presented) and found is None:
                found = entry
        return found

    def identify(self, name: str | None, token: str | None) -> str:
        """The name a visitor posts and reads as; raises SignInError when refused.

        A ``name:token`` entry's token always signs in as that name; a bare (room) token signs in
        under any name no entry binds. Checked on every request, not only at sign-in.
        """
        if name is not None and not NAME.fullmatch(name):
            raise SignInError("A name is 1 to 64 letters, digits, dots, dashes or underscores.")
        if self.open:
            if name is None:
                raise SignInError("Pick a name to chat with.")
            return name
        found = self._match(token)
        if found is None:
            raise SignInError(NEEDS_TOKEN)
        if found.name is not None:
            return found.name
        if name is None:
            raise SignInError("Pick a name to chat with.")
        if name.casefold() in self._bound:
            raise SignInError(
                f"The name {name!r} belongs to its own access token: sign in with that token, "
                "or pick another name."
            )
        return name

    def reader(self, name: str | None, token: str | None, operators: TokenTable | None) -> Reader:
        """Who asks to read a room: an operator API token, else a web sign-in (unnamed when no name is
        given and the token binds none). Raises SignInError when neither is valid."""
        if token and operators is not None:
            caller = operators.find(token)
            if caller is not None and caller.role == OPERATOR:
                return Reader(operator=True, agents=caller.agents)
        if not self.may_read(token):
            raise SignInError(NEEDS_TOKEN)
        found = None if self.open else self._match(token)
        if name is None and (found is None or found.name is None):
            return Reader()  # no name yet: reads only the rooms anyone may
        return Reader(identity=f"web:{self.identify(name, token)}")


NEEDS_TOKEN = "This chat needs its access token (THREADGATE_WEB_TOKEN); check it and retry."


async def may_read_room(audiences: Audiences | None, thread_id: str, reader: Reader) -> bool:
    """The one check in front of every route that shows a room's content (see ``gateway.rules.audience``);
    without the gateway's facts nothing is shown."""
    return audiences is not None and await audiences.may_read(thread_id, reader)
