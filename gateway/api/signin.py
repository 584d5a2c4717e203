"""Sign-in routes (``/auth/login``, ``/auth/callback``, ``/auth/logout``, ``GET /v1/me``), the session
cookie as an API credential, and ``/mcp`` as an OAuth protected resource (RFC 9728, MCP 2025-11-25)."""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from pydantic import BaseModel
from starlette.types import Scope

from gateway.api.asgi import header_of
from gateway.api.auth import AGENT, PERSON, Principal
from gateway.api.client_address import client_address
from gateway.api.deps import limiter_of
from gateway.api.errors import error_responses
from gateway.api.same_origin import cross_site, origin_of
from gateway.base.errors import GatewayError
from gateway.base.settings import Settings
from gateway.delivery.channel_services import Sessions, SignedInPerson
from gateway.people.oidc import Client, Provider, ProviderUnavailable, TokenRefused
from gateway.people.signin import LOGIN_COOKIE, LOGIN_TTL_S, SESSION_COOKIE, SignedIn, SignIn, SignInFailed
from gateway.store.signins import SignIns

router = APIRouter(include_in_schema=False)
me_router = APIRouter(prefix="/v1", tags=["people"])

RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource"
MCP_PATH = "/mcp"
LOGINS_PER_ADDRESS = 30  # sign-ins started per client address per window
LOGINS_IN_ALL = 3000  # and by everyone: at most this many logins are kept in Redis per window
LOGIN_WINDOW_S = 60
VERIFIED_KEPT = 1024  # access tokens remembered once verified
PERSON_STATE_KEY = "person"  # request.state.person: the signed-in person of a session


@dataclass
class OAuthResource:
    """``/mcp`` as a protected resource: the issuer's access tokens for mapped clients act as agent
    tokens for those clients' agents.

    A token once verified is remembered until it expires, by a hash: the MCP tools call the API
    in-process with the caller's token (at ``http://localhost``, where the resource would read otherwise).
    """

    provider: Provider
    clients: dict[str, frozenset[str]]
    public_url: str | None
    _verified: OrderedDict[str, tuple[float, Principal]] = field(default_factory=OrderedDict)

    def base_url(self, scope: Scope) -> str:
        if self.public_url:
            return self.public_url.rstrip("/")
        host = header_of(scope, b"host") or "localhost"
        return f"{scope.get('scheme', 'http')}://{host}"

    def resource(self, scope: Scope) -> str:
        return self.base_url(scope) + MCP_PATH

    def metadata_url(self, scope: Scope) -> str:
        return self.base_url(scope) + RESOURCE_METADATA_PATH

    async def principal(self, token: str, scope: Scope) -> Principal | None:
        """The agent principal an access token stands for, or None when it is not one to accept."""
        if token.count(".") != 2 or not self.clients:
            return None
        digest = hashlib.sha256(token.encode()).hexdigest()
        known = self._verified.get(digest)
        if known is not None and known[0] > time.time():
            return known[1]
        try:
            claims = await self.provider.verify(token, audience=self.resource(scope))
        except (TokenRefused, ProviderUnavailable):
            return None
        client = claims.get("azp") or claims.get("client_id")
        agents = self.clients.get(client) if isinstance(client, str) else None
        if agents is None:
            return None
        found = Principal(f"oauth:{client}", AGENT, agents)
        self._verified[digest] = (float(claims["exp"]), found)
        while len(self._verified) > VERIFIED_KEPT:
            self._verified.popitem(last=False)
        return found


def build_signin(settings: Settings, store: SignIns) -> tuple[SignIn | None, OAuthResource | None]:
    """Sign-in and the MCP resource as the settings ask: neither without ``THREADGATE_OIDC_ISSUER``."""
    issuer = settings.threadgate_oidc_issuer
    if not issuer:
        return None, None
    provider = Provider(issuer)
    public_url = settings.threadgate_public_url
    resource = OAuthResource(provider, settings.oauth_clients(), public_url)
    if not settings.signin_configured():
        return None, resource
    secret = settings.threadgate_session_secret
    client_secret = settings.threadgate_oidc_client_secret
    assert secret is not None and client_secret is not None  # checked by the settings
    client = Client(
        client_id=str(settings.threadgate_oidc_client_id),
        client_secret=client_secret.get_secret_value(),
        scopes=settings.threadgate_oidc_scopes,
        redirect_uri=f"{public_url.rstrip('/')}/auth/callback" if public_url else None,
    )
    signin = SignIn(
        provider,
        client,
        store,
        secret.get_secret_value().encode(),
        session_hours=settings.threadgate_session_hours,
        groups_claim=settings.threadgate_oidc_groups_claim,
    )
    return signin, resource


def cookie_of(scope: Scope, name: str) -> str | None:
    """One cookie's value from the raw ``Cookie`` header."""
    for part in (header_of(scope, b"cookie") or "").split(";"):
        key, _, value = part.strip().partition("=")
        if key == name and value:
            return value
    return None


def channel_sessions(signin: SignIn) -> Sessions:
    """Sign-in as lent to channels: the person a request's ``Cookie`` header signs in, or None."""

    async def person(cookie_header: str | None) -> SignedInPerson | None:
        scope: Scope = (
            {"headers": [(b"cookie", cookie_header.encode("latin-1", "replace"))]} if cookie_header else {}
        )
        session_id = cookie_of(scope, SESSION_COOKIE)
        signed = await signin.person(session_id) if session_id else None
        if signed is None:
            return None
        return SignedInPerson(signed.identity, signed.email, signed.identities)

    return Sessions(person)


def cookie_write_refusal(scope: Scope, public_origin: str | None) -> GatewayError | None:
    """A write carried by the session cookie needs a JSON body type and a same-origin ``Origin``: a page
    of another site can make the browser send the cookie, but neither of these."""
    content_type = (header_of(scope, b"content-type") or "").split(";")[0].strip().lower()
    origin = header_of(scope, b"origin")
    host = header_of(scope, b"host") or ""
    fetch_site = header_of(scope, b"sec-fetch-site")
    if content_type != "application/json":
        return GatewayError(
            "CROSS_SITE_REQUEST",
            "A write signed in by the session cookie must be sent as Content-Type: application/json.",
            403,
            {"content_type": content_type or None},
        )
    if origin is None or cross_site(origin, fetch_site, host, public_origin):
        return GatewayError(
            "CROSS_SITE_REQUEST",
            "A write signed in by the session cookie must come from the gateway's own pages (a same-origin "
            "Origin header). Behind a proxy, set THREADGATE_PUBLIC_URL to the address people open.",
            403,
            {"origin": origin},
        )
    return None


async def session_principal(signin: SignIn, scope: Scope) -> tuple[Principal, SignedIn] | None:
    """The session cookie's person as a caller, or None without a cookie; 401 for a dead session."""
    session_id = cookie_of(scope, SESSION_COOKIE)
    if session_id is None:
        return None
    person = await signin.person(session_id)
    if person is None:
        raise GatewayError(
            "UNAUTHORIZED", "Your session has expired or ended; sign in again at /auth/login.", 401
        )
    return Principal(person.identity, PERSON, None), person


def _signin(request: Request) -> SignIn:
    signin: SignIn | None = request.app.state.signin
    if signin is None:
        raise GatewayError(
            "SIGN_IN_NOT_CONFIGURED",
            "Sign-in is not configured: set THREADGATE_OIDC_ISSUER, THREADGATE_OIDC_CLIENT_ID and "
            'THREADGATE_OIDC_CLIENT_SECRET (docs/people.md, "Sign-in").',
            404,
        )
    return signin


def _secure(request: Request) -> bool:
    public_url: str | None = request.app.state.runtime.settings.threadgate_public_url
    return request.url.scheme == "https" or bool(public_url and public_url.startswith("https:"))


@router.get("/auth/login")
async def login(request: Request, next: Annotated[str | None, Query(max_length=2000)] = None) -> Response:
    """Off to the identity provider, with a fresh state, nonce and PKCE S256 challenge."""
    signin = _signin(request)
    # Each login keeps a few hundred bytes in Redis for ten minutes: bounded per address and in all.
    limiter = limiter_of(request)
    await limiter.enforce(
        [
            (f"signin:{client_address(request)}", LOGINS_PER_ADDRESS, LOGIN_WINDOW_S),
            ("signin:*", LOGINS_IN_ALL, LOGIN_WINDOW_S),
        ],
        "sign-ins",
    )
    try:
        started = await signin.begin(next, str(request.base_url))
    except ProviderUnavailable as exc:
        raise GatewayError(
            "IDP_UNAVAILABLE", f"The identity provider cannot be reached: {exc}.", 502
        ) from None
    response = RedirectResponse(started.url, status_code=302)
    response.set_cookie(
        LOGIN_COOKIE,
        started.binder,
        max_age=LOGIN_TTL_S,
        path="/auth",
        httponly=True,
        samesite="lax",
        secure=_secure(request),
    )
    response.headers["cache-control"] = "no-store"
    return response


@router.get("/auth/callback")
async def callback(request: Request) -> Response:
    """Back from the provider: state checked, code exchanged, ID token verified, session opened."""
    signin = _signin(request)
    query = request.query_params
    if query.get("error"):
        raise GatewayError(
            "SIGN_IN_FAILED", f"The identity provider did not sign you in ({query['error'][:100]}).", 400
        )
    named = query.get("iss")
    if named is not None and named.rstrip("/") != signin.provider.issuer.rstrip("/"):
        raise GatewayError("SIGN_IN_FAILED", "The callback names another issuer (iss); sign in again.", 400)
    try:
        session_id, next_page = await signin.finish(
            query.get("state"), query.get("code"), request.cookies.get(LOGIN_COOKIE)
        )
    except SignInFailed as failed:
        raise GatewayError("SIGN_IN_FAILED", failed.message, failed.status) from None
    except ProviderUnavailable as exc:
        raise GatewayError(
            "IDP_UNAVAILABLE", f"The identity provider cannot be reached: {exc}.", 502
        ) from None
    response = RedirectResponse(next_page, status_code=302)
    secure = _secure(request)
    response.set_cookie(
        SESSION_COOKIE,
        session_id,
        max_age=signin.session_seconds,
        path="/",
        httponly=True,
        samesite="lax",
        secure=secure,
    )
    response.delete_cookie(LOGIN_COOKIE, path="/auth", httponly=True, samesite="lax", secure=secure)
    response.headers["cache-control"] = "no-store"
    return response


@router.post("/auth/logout")
async def logout(request: Request) -> Response:
    """End the session (in Redis, for every process) and clear its cookie. Another site's page may not
    sign people out (403)."""
    public_url = request.app.state.runtime.settings.threadgate_public_url
    origin = request.headers.get("origin")
    host = request.headers.get("host", "")
    public_origin = origin_of(public_url) if public_url else None
    if cross_site(origin, request.headers.get("sec-fetch-site"), host, public_origin):
        raise GatewayError(
            "CROSS_SITE_REQUEST", "Sign out from the gateway's own pages.", 403, {"origin": origin}
        )
    signin: SignIn | None = request.app.state.signin
    if signin is not None:
        await signin.end(request.cookies.get(SESSION_COOKIE))
    response = JSONResponse({"signed_in": False})
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="lax", secure=_secure(request))
    return response


@router.get(RESOURCE_METADATA_PATH)
@router.get(RESOURCE_METADATA_PATH + MCP_PATH)
async def protected_resource(request: Request) -> JSONResponse:
    """RFC 9728 metadata of ``/mcp``: where MCP clients get an access token for it."""
    resource: OAuthResource | None = request.app.state.oauth_resource
    if resource is None:
        raise GatewayError(
            "NOT_FOUND", "MCP authorization is not configured: set THREADGATE_OIDC_ISSUER.", 404
        )
    body: dict[str, Any] = {
        "resource": resource.resource(request.scope),
        "authorization_servers": [resource.provider.issuer],
        "bearer_methods_supported": ["header"],
    }
    return JSONResponse(body, headers={"cache-control": "public, max-age=300"})


class Me(BaseModel):
    """The signed-in person, as the directory has them (and the identity provider's groups)."""

    person: str
    name: str | None
    email: str | None
    identities: list[str]
    groups: list[str]


@me_router.get("/me", response_model=Me, responses=error_responses())
async def me(request: Request) -> JSONResponse:
    """The signed-in person: ``{person, name, email, identities, groups}``; 401 without a session."""
    person = getattr(request.state, PERSON_STATE_KEY, None)
    if not isinstance(person, SignedIn):
        raise GatewayError("UNAUTHORIZED", "Sign in first: /v1/me is the person of a session.", 401)
    return JSONResponse(person.public())
