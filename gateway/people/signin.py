"""Sign-in with the organisation's identity provider: a login, its callback, and the session it leaves.

A login keeps its state, nonce and PKCE verifier in Redis under a keyed hash of the state, bound to the
browser that started it by a short-lived cookie. The callback turns the provider's ID token into a person
of the directory (by verified email), else ``person:<slug of sub>``, and opens a session: a random id in
the ``tg_session`` cookie, kept in Redis under a keyed hash of that id, checked on every use (expired,
ended at logout, or the person removed from the directory: refused).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

from gateway.base.logs import event
from gateway.people.oidc import Client, Provider, TokenRefused
from gateway.store.signins import SignIns

SESSION_COOKIE = "tg_session"
LOGIN_COOKIE = "tg_login"
LOGIN_TTL_S = 600  # a person has ten minutes at the provider
DEFAULT_NEXT = "/inbox"
PERSON_ID = re.compile(r"[a-z0-9._-]{1,64}")
MAX_NEXT_CHARS = 2000


class DirectoryPerson(Protocol):
    """What sign-in reads of a person of the directory."""

    @property
    def person(self) -> str: ...
    @property
    def name(self) -> str | None: ...
    @property
    def email(self) -> str | None: ...
    @property
    def identities(self) -> list[str]: ...
    @property
    def groups(self) -> list[str]: ...


class PeopleDirectory(Protocol):
    """The directory of people, as sign-in looks people up in it."""

    async def by_email(self, email: str) -> DirectoryPerson | None: ...
    async def get(self, person_id: str) -> DirectoryPerson | None: ...


class NoPeople:
    """A directory with nobody in it: everyone signs in as ``person:<slug of sub>``."""

    async def by_email(self, email: str) -> DirectoryPerson | None:
        return None

    async def get(self, person_id: str) -> DirectoryPerson | None:
        return None


@dataclass(frozen=True, slots=True)
class SignedIn:
    """The person behind a session, as ``GET /v1/me`` shows them."""

    person: str
    name: str | None
    email: str | None
    identities: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()

    @property
    def identity(self) -> str:
        """How an answer names this person: ``person:<id>``."""
        return f"person:{self.person}"

    def public(self) -> dict[str, Any]:
        return {
            "person": self.person,
            "name": self.name,
            "email": self.email,
            "identities": list(self.identities),
            "groups": list(self.groups),
        }


class SignInFailed(Exception):
    """A callback that opens no session; ``status`` and the message are what the person is told."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


@dataclass(frozen=True, slots=True)
class Login:
    """Where to send the browser, and the cookie that binds the callback to it."""

    url: str
    binder: str


@dataclass
class SignIn:
    """Sign-in for one gateway: the provider, the gateway's registration there, and the sessions."""

    provider: Provider
    client: Client
    store: SignIns
    secret: bytes
    session_hours: int = 12
    groups_claim: str = "groups"
    directory: PeopleDirectory = field(default_factory=NoPeople)

    @property
    def session_seconds(self) -> int:
        return self.session_hours * 3600

    def digest(self, value: str) -> str:
        """A keyed hash of a secret the browser holds: what Redis keys are named by."""
        return hmac.new(self.secret, value.encode(), hashlib.sha256).hexdigest()

    def redirect_uri(self, base_url: str) -> str:
        """``<THREADGATE_PUBLIC_URL>/auth/callback``; without one, the callback where the browser is."""
        return self.client.redirect_uri or f"{base_url.rstrip('/')}/auth/callback"

    async def begin(self, next_page: str | None, base_url: str) -> Login:
        """A new login: its state, nonce and verifier kept for ten minutes, and the authorize URL."""
        state, nonce, verifier = (
            secrets.token_urlsafe(32),
            secrets.token_urlsafe(32),
            secrets.token_urlsafe(48),
        )
        binder = secrets.token_urlsafe(32)
        record = {
            "nonce": nonce,
            "verifier": verifier,
            "next": safe_next(next_page),
            "binder": self.digest(binder),
            "redirect_uri": self.redirect_uri(base_url),
        }
        url = await self.provider.authorization_url(
            self.client, redirect_uri=record["redirect_uri"], state=state, nonce=nonce, verifier=verifier
        )
        await self.store.begin_login(self.digest(state), record, LOGIN_TTL_S)
        return Login(url, binder)

    async def finish(self, state: str | None, code: str | None, binder: str | None) -> tuple[str, str]:
        """The callback: a new session id and the page to go to; SignInFailed when anything is off."""
        if not state or not code:
            raise SignInFailed("The sign-in callback needs the provider's state and code; sign in again.")
        login = await self.store.take_login(self.digest(state))
        if login is None:
            raise SignInFailed("This sign-in is unknown or expired (ten minutes); sign in again.")
        if not binder or not hmac.compare_digest(login["binder"], self.digest(binder)):
            raise SignInFailed("This sign-in was started in another browser; sign in again from this one.")
        try:
            tokens = await self.provider.exchange(
                self.client, redirect_uri=login["redirect_uri"], code=code, verifier=login["verifier"]
            )
            id_token = tokens.get("id_token")
            if not isinstance(id_token, str):
                raise TokenRefused("the provider sent no ID token")
            claims = await self.provider.verify(
                id_token, audience=self.client.client_id, nonce=login["nonce"]
            )
        except TokenRefused as refused:
            raise SignInFailed(f"Sign-in refused: {refused}.", 401) from None
        session_id = await self.open_session(claims)
        return session_id, str(login["next"])

    async def open_session(self, claims: dict[str, Any]) -> str:
        """A session for the person the ID token names; the session id (only its hash is kept)."""
        found = await self._directory_person(claims)
        token_groups = _claim_groups(claims.get(self.groups_claim))
        if found is not None:
            record = {"person": found.person, "in_directory": True}
        else:
            record = {
                "person": await self._sub_person(str(claims.get("sub") or "")),
                "in_directory": False,
                "name": _text(claims.get("name")) or _text(claims.get("preferred_username")),
                "email": _text(claims.get("email")),
            }
        if self.groups_claim not in claims and _overage(claims, self.groups_claim):
            # Entra ID leaves a person's groups out past 200 and points to Microsoft Graph instead.
            event("signin.groups_overage", logging.WARNING, person=record["person"], claim=self.groups_claim)
        record.update(token_groups=list(token_groups), signed_in_at=int(time.time()))
        session_id = secrets.token_urlsafe(32)
        await self.store.put_session(self.digest(session_id), record, self.session_seconds)
        return session_id

    async def person(self, session_id: str | None) -> SignedIn | None:
        """The person of a live session, from the directory as it is now; None when there is none, it
        expired or ended, or its person was removed from the directory (the session is then ended)."""
        if not session_id or len(session_id) > 200:
            return None
        digest = self.digest(session_id)
        record = await self.store.session(digest)
        if record is None:
            return None
        token_groups = tuple(record.get("token_groups") or ())
        if not record.get("in_directory"):
            return SignedIn(
                record["person"], record.get("name"), record.get("email"), (), _merged((), token_groups)
            )
        found = await self.directory.get(record["person"])
        if found is None:
            await self.store.end_session(digest)
            return None
        return SignedIn(
            found.person,
            found.name,
            found.email,
            tuple(found.identities),
            _merged(tuple(found.groups), token_groups),
        )

    async def end(self, session_id: str | None) -> None:
        if session_id and len(session_id) <= 200:
            await self.store.end_session(self.digest(session_id))

    async def _directory_person(self, claims: dict[str, Any]) -> DirectoryPerson | None:
        email = _text(claims.get("email"))
        if not email or claims.get("email_verified") is False:
            return None
        return await self.directory.by_email(email)

    async def _sub_person(self, sub: str) -> str:
        """``sub`` as a person id; one that is not already one, or that a directory person holds, gets a
        hash of ``sub`` appended, so nobody's ``sub`` can become another's person."""
        if not sub:
            raise SignInFailed("Sign-in refused: the ID token has no subject (sub).", 401)
        if PERSON_ID.fullmatch(sub) and await self.directory.get(sub) is None:
            return sub
        stem = re.sub(r"[^a-z0-9._-]+", "-", sub.lower()).strip("-")[:50] or "sub"
        return f"{stem}-{hashlib.sha256(sub.encode()).hexdigest()[:12]}"


def safe_next(next_page: str | None) -> str:
    """Where to go after signing in: a path on this gateway; anything else (another origin, ``//host``,
    a scheme, back slashes, control characters) is the inbox."""
    page = (next_page or "").strip()
    if (
        not page.startswith("/")
        or page.startswith("//")
        or "\\" in page
        or len(page) > MAX_NEXT_CHARS
        or any(ord(char) < 0x20 or ord(char) == 0x7F for char in page)
    ):
        return DEFAULT_NEXT
    parts = urlsplit(page)
    if parts.scheme or parts.netloc:
        return DEFAULT_NEXT
    return page


def _text(value: Any) -> str | None:
    return value.strip()[:320] or None if isinstance(value, str) else None


def _claim_groups(value: Any) -> tuple[str, ...]:
    """A groups claim: a list of names (or one name); anything else is no groups."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return ()
    return tuple(item[:200] for item in value[:200] if isinstance(item, str) and item)


def _overage(claims: dict[str, Any], claim: str) -> bool:
    """Whether the token says ``claim`` is to be fetched elsewhere (``_claim_names``, OIDC Core 5.6.2)."""
    names = claims.get("_claim_names")
    return isinstance(names, dict) and claim in names


def _merged(first: tuple[str, ...], second: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys((*first, *second)))
