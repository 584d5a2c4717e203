"""The Bot Connector's bearer token on an inbound activity, checked before the activity is read.

The public protocol ("Authentication with the Bot Connector API"): an RS256 JWT issued by
``https://api.botframework.com`` for this app (audience = the app id), not expired, signed by a key
from the JWKS the OpenID metadata names; that key's ``endorsements`` must list the activity's channel
(``msteams``), and the token's ``serviceurl`` claim must equal the activity's ``serviceUrl``. The metadata
and keys are cached; a token signed by a key not in the cache refetches them, at most once per
``refetch_every`` seconds, so tokens with made-up key ids cannot make the gateway hammer the endpoint.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import jwt

ISSUER = "https://api.botframework.com"
LEEWAY_S = 300  # the clock skew the Bot Framework's own validators allow
REFETCH_EVERY_S = 300.0  # at most one refetch of the keys per this, for an unknown key id
METADATA_TTL_S = 24 * 3600.0  # the keys themselves rotate about every few weeks
MAX_TOKEN_CHARS = 8_192
FETCH_TIMEOUT_S = 10.0
OUTAGE_RETRY_S = 10.0  # while no key is known at all, how soon a failed fetch is tried again


class Unauthorized(Exception):
    """The request does not carry a valid Bot Connector token (answered 401)."""


class KeysUnavailable(Exception):
    """No signing keys are known and the metadata cannot be fetched now (answered 503: retried)."""


@dataclass(frozen=True, slots=True)
class SigningKey:
    key: jwt.PyJWK
    endorsements: frozenset[str]


@dataclass(frozen=True, slots=True)
class Verified:
    """A token that passed: its claims and what its key may sign for."""

    claims: dict[str, Any]
    endorsements: frozenset[str]

    def check_activity(self, channel_id: object, service_url: object) -> None:
        """The activity's channel must be one the key endorses, its serviceUrl the token's."""
        if not isinstance(channel_id, str) or channel_id not in self.endorsements:
            raise Unauthorized("the signing key does not endorse this channel")
        claimed = self.claims.get("serviceurl")
        if not isinstance(claimed, str) or not isinstance(service_url, str):
            raise Unauthorized("no serviceurl to compare")
        if claimed.rstrip("/") != service_url.rstrip("/"):
            raise Unauthorized("the serviceUrl is not the one the token was issued for")


def bearer(authorization: str | None) -> str:
    """The token in an ``Authorization: Bearer <token>`` header."""
    scheme, _, token = (authorization or "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > MAX_TOKEN_CHARS:
        raise Unauthorized("no bearer token")
    return token


def _signing_keys(jwks: object) -> dict[str, SigningKey]:
    keys: dict[str, SigningKey] = {}
    entries = jwks.get("keys") if isinstance(jwks, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("kid"), str):
            continue
        endorsements = entry.get("endorsements")
        names = (
            [name for name in endorsements if isinstance(name, str)] if isinstance(endorsements, list) else []
        )
        try:
            key = jwt.PyJWK(entry, algorithm="RS256")
        except jwt.PyJWTError:
            continue  # a key of another type: nothing it signs is accepted here
        keys[entry["kid"]] = SigningKey(key, frozenset(names))
    return keys


class ConnectorAuth:
    """Checks inbound tokens against the Bot Framework's published keys."""

    def __init__(
        self,
        app_id: str,
        metadata_url: str,
        *,
        http: httpx.AsyncClient | None = None,
        leeway: float = LEEWAY_S,
        refetch_every: float = REFETCH_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app_id = app_id
        self.metadata_url = metadata_url
        self.leeway = leeway
        self.refetch_every = refetch_every
        self.clock = clock
        self._http = http or httpx.AsyncClient(timeout=FETCH_TIMEOUT_S)
        self._keys: dict[str, SigningKey] = {}
        self._jwks_uri: str | None = None
        self._metadata_at: float | None = None
        self._fetched_at: float | None = None
        self._lock = asyncio.Lock()

    async def close(self) -> None:
        await self._http.aclose()

    async def verify(self, authorization: str | None) -> Verified:
        """The token's claims once signature, issuer, audience and expiry check out; Unauthorized if not."""
        token = bearer(authorization)
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise Unauthorized("the token is not a JWT") from exc
        kid = header.get("kid")
        if header.get("alg") != "RS256" or not isinstance(kid, str):
            raise Unauthorized("the token is not signed with RS256 by a named key")
        signing = await self._key(kid)
        try:
            claims = jwt.decode(
                token,
                signing.key.key,
                algorithms=["RS256"],
                audience=self.app_id,
                issuer=ISSUER,
                leeway=self.leeway,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.PyJWTError as exc:
            raise Unauthorized(type(exc).__name__) from exc
        return Verified(claims, signing.endorsements)

    async def _key(self, kid: str) -> SigningKey:
        known = self._keys.get(kid)
        if known is not None:
            return known
        async with self._lock:
            known = self._keys.get(kid)
            if known is None and self._may_refetch():
                await self._refetch()
                known = self._keys.get(kid)
        if known is None and not self._keys:
            raise KeysUnavailable("no signing keys are known yet")
        if known is None:
            raise Unauthorized("the token is signed by an unknown key")
        return known

    def _may_refetch(self) -> bool:
        return self._fetched_at is None or self.clock() - self._fetched_at >= self.refetch_every

    async def _refetch(self) -> None:
        """The keys again (and the metadata, once a day). Without any key yet, a failure is an outage."""
        now = self.clock()
        try:
            if (
                self._jwks_uri is None
                or self._metadata_at is None
                or now - self._metadata_at >= METADATA_TTL_S
            ):
                metadata = await self._get_json(self.metadata_url)
                jwks_uri = metadata.get("jwks_uri") if isinstance(metadata, dict) else None
                if not isinstance(jwks_uri, str) or not jwks_uri.startswith(("https://", "http://")):
                    raise ValueError("the OpenID metadata names no jwks_uri")
                self._jwks_uri, self._metadata_at = jwks_uri, now
            keys = _signing_keys(await self._get_json(self._jwks_uri))
        except (httpx.HTTPError, ValueError) as exc:
            # Keep the keys we have and try again later; with none, sooner (every request fails till then).
            self._fetched_at = now - self.refetch_every + OUTAGE_RETRY_S if not self._keys else now
            if not self._keys:
                raise KeysUnavailable(str(exc) or type(exc).__name__) from exc
            return
        self._fetched_at = now
        if keys:
            self._keys = keys

    async def _get_json(self, url: str) -> Any:
        response = await self._http.get(url)
        response.raise_for_status()
        return response.json()
