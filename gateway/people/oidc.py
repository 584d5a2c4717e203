"""The organisation's OpenID Connect provider, as the gateway uses it: discovery, keys, code exchange, JWTs.

Authlib does the OAuth dance (authorization URL with PKCE S256, the code exchange) and its JOSE library,
joserfc, checks signatures and claims: the hard parts of sign-in are a well-kept library's, not ours.
What is ours is the policy: which algorithms (asymmetric only, never ``none``), which claims must match,
and when to fetch the keys again (an unknown ``kid`` means the provider rotated its keys).
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from typing import Any

import httpx
from authlib.common.errors import AuthlibBaseError
from authlib.integrations.httpx_client import AsyncOAuth2Client
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet
from joserfc.jws import extract_compact

DISCOVERY_PATH = "/.well-known/openid-configuration"
ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]
DISCOVERY_TTL_S = 3600.0
KEYS_TTL_S = 3600.0
# An unknown kid fetches the keys again, at once after a rotation, but at most this many times a minute:
# tokens naming made-up keys cannot turn the gateway into a flood of requests to the provider.
REFETCHES_PER_MINUTE = 10
LEEWAY_S = 60  # clock skew allowed on exp and iat
HTTP_TIMEOUT_S = 10.0


class TokenRefused(Exception):
    """A JWT that is not to be believed; the message says why (for logs and the person, never the token)."""


class ProviderUnavailable(Exception):
    """The provider's discovery document, keys or token endpoint could not be read."""


@dataclass(frozen=True, slots=True)
class Client:
    """The gateway's registration at the provider."""

    client_id: str
    client_secret: str
    scopes: str
    redirect_uri: str | None = None  # None: the callback on the address the browser used


class Provider:
    """One issuer: its discovery document and key set, each cached, and the checks of its JWTs."""

    def __init__(self, issuer: str, *, refetches_per_minute: int = REFETCHES_PER_MINUTE) -> None:
        self.issuer = issuer
        self.token_issuer = issuer  # ``iss`` as the provider writes it: its discovery document's ``issuer``
        self.refetches_per_minute = refetches_per_minute
        self._refetches: deque[float] = deque()
        self._metadata: tuple[float, dict[str, Any]] | None = None
        self._keys: tuple[float, KeySet] | None = None

    def _http(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(timeout=HTTP_TIMEOUT_S, follow_redirects=False)

    async def _get_json(self, url: str) -> dict[str, Any]:
        try:
            async with self._http() as http:
                response = await http.get(url, headers={"accept": "application/json"})
            response.raise_for_status()
            found = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise ProviderUnavailable(f"{url} could not be read: {type(exc).__name__}") from None
        if not isinstance(found, dict):
            raise ProviderUnavailable(f"{url} is not a JSON object")
        return found

    async def metadata(self) -> dict[str, Any]:
        """The issuer's discovery document, cached for an hour; it must name this issuer."""
        now = time.monotonic()
        if self._metadata is not None and self._metadata[0] > now:
            return self._metadata[1]
        found = await self._get_json(self.issuer.rstrip("/") + DISCOVERY_PATH)
        named = found.get("issuer")
        if not isinstance(named, str) or named.rstrip("/") != self.issuer.rstrip("/"):
            raise ProviderUnavailable(f"the discovery document names issuer {named!r}, not {self.issuer!r}")
        self.token_issuer = named  # as the tokens write it, whether or not the setting ends in a slash
        for field in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
            if not isinstance(found.get(field), str):
                raise ProviderUnavailable(f"the discovery document has no {field}")
        self._metadata = (now + DISCOVERY_TTL_S, found)
        return found

    async def keys(self, *, refresh: bool = False) -> KeySet:
        """The issuer's signing keys; fetched again when ``refresh`` (not more often than the interval)."""
        now = time.monotonic()
        cached = self._keys
        if cached is not None and (cached[0] > now and not refresh):
            return cached[1]
        if cached is not None and refresh:
            while self._refetches and self._refetches[0] < now - 60:
                self._refetches.popleft()
            if len(self._refetches) >= self.refetches_per_minute:
                return cached[1]
            self._refetches.append(now)
        metadata = await self.metadata()
        try:
            found = KeySet.import_key_set(await self._get_json(metadata["jwks_uri"]))  # type: ignore[arg-type]
        except (JoseError, ValueError, KeyError, TypeError) as exc:
            raise ProviderUnavailable(f"the issuer's keys could not be read: {type(exc).__name__}") from None
        self._keys = (now + KEYS_TTL_S, found)
        return found

    async def verify(self, token: str, *, audience: str, nonce: str | None = None) -> dict[str, Any]:
        """The claims of a JWT this issuer signed for ``audience``, still valid; else TokenRefused.

        Checked: the signature by one of the issuer's keys (fetched again for an unknown ``kid``), an
        asymmetric algorithm, ``iss``, ``aud`` (and ``azp`` when there are several audiences), ``exp``,
        and ``nonce`` when one is expected.
        """
        keys = await self.keys()
        try:
            decoded = _decode(token, keys)
        except _UnknownKey:
            try:
                decoded = _decode(token, await self.keys(refresh=True))
            except _UnknownKey:
                raise TokenRefused("the token is signed by a key the issuer does not publish") from None
        claims = decoded.claims
        registry = jwt.JWTClaimsRegistry(
            leeway=LEEWAY_S,
            iss={"essential": True, "value": self.token_issuer},
            aud={"essential": True, "value": audience},
            exp={"essential": True},
        )
        try:
            registry.validate(claims)
        except JoseError as exc:
            raise TokenRefused(f"the token's claims do not hold: {exc.description or exc.error}") from None
        audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
        if len(audiences) > 1 and claims.get("azp") not in (None, audience):
            raise TokenRefused("the token was issued to another client (azp)")
        if nonce is not None and claims.get("nonce") != nonce:
            raise TokenRefused("the token's nonce is not this sign-in's")
        return claims

    async def authorization_url(
        self, client: Client, *, redirect_uri: str, state: str, nonce: str, verifier: str
    ) -> str:
        """Where to send the browser: the authorize endpoint with state, nonce and the S256 challenge."""
        metadata = await self.metadata()
        async with self._oauth(client, redirect_uri) as oauth:
            url, _ = oauth.create_authorization_url(
                metadata["authorization_endpoint"], state=state, nonce=nonce, code_verifier=verifier
            )
        return str(url)

    async def exchange(
        self, client: Client, *, redirect_uri: str, code: str, verifier: str
    ) -> dict[str, Any]:
        """The token endpoint's answer to the code and its PKCE verifier (with ``id_token``)."""
        metadata = await self.metadata()
        methods = metadata.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
        method = "client_secret_basic" if "client_secret_basic" in methods else "client_secret_post"
        try:
            async with self._oauth(client, redirect_uri, method) as oauth:
                token = await oauth.fetch_token(
                    metadata["token_endpoint"],
                    grant_type="authorization_code",
                    code=code,
                    code_verifier=verifier,
                )
        except httpx.HTTPError as exc:
            raise ProviderUnavailable(
                f"the token endpoint could not be reached: {type(exc).__name__}"
            ) from None
        except (
            AuthlibBaseError,
            ValueError,
            KeyError,
        ) as exc:  # the provider refused the code, or said nonsense
            raise TokenRefused(
                f"the provider refused the code: {getattr(exc, 'error', type(exc).__name__)}"
            ) from None
        return dict(token)

    def _oauth(
        self, client: Client, redirect_uri: str, method: str = "client_secret_basic"
    ) -> AsyncOAuth2Client:
        return AsyncOAuth2Client(
            client_id=client.client_id,
            client_secret=client.client_secret,
            scope=client.scopes,
            redirect_uri=redirect_uri,
            code_challenge_method="S256",
            token_endpoint_auth_method=method,
            timeout=HTTP_TIMEOUT_S,
        )


class _UnknownKey(Exception):
    """The token names a key the cached set does not hold: the provider may have rotated its keys."""


def _decode(token: str, keys: KeySet) -> jwt.Token:
    try:
        kid = _header(token).get("kid")
        if kid is not None and not any(key.kid == kid for key in keys):
            raise _UnknownKey
        return jwt.decode(token, keys, algorithms=ALGORITHMS)
    except _UnknownKey:
        raise
    except (JoseError, ValueError, TypeError) as exc:
        raise TokenRefused(f"the token's signature does not hold: {type(exc).__name__}") from None


def _header(token: str) -> dict[str, Any]:
    try:
        return dict(extract_compact(token.encode()).protected)
    except (JoseError, ValueError, TypeError) as exc:
        raise TokenRefused(f"the token is not a JWT: {type(exc).__name__}") from None
