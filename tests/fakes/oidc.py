"""An OpenID Connect provider on a free port: discovery, JWKS (with rotation), authorize, token with PKCE.

It signs people in without asking (``provider.user`` is who the next login is), and it can be told to
mint a bad ID token for the next exchange (``provider.spoil_next(...)``): wrong ``aud``/``nonce``/``iss``,
expired, unsigned (``alg: none``), or signed by a key it does not publish. ``access_token(...)`` mints
the JWT access tokens an MCP client would bring.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from joserfc import jwt
from joserfc.jwk import RSAKey


def _new_key() -> RSAKey:
    return RSAKey.generate_key(2048, parameters={"kid": secrets.token_hex(8), "use": "sig"}, private=True)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass
class Grant:
    client_id: str
    redirect_uri: str
    nonce: str | None
    challenge: str | None
    method: str | None
    user: dict[str, Any]


@dataclass
class FakeOidcProvider:
    """The provider's state; ``start()`` serves it on 127.0.0.1 and sets ``issuer``."""

    client_id: str = "threadgate"
    client_secret: str = "fake-client-secret"
    redirect_uris: set[str] = field(default_factory=set)  # empty: any
    user: dict[str, Any] = field(
        default_factory=lambda: {
            "sub": "alice-sub",
            "email": "alice@example.com",
            "email_verified": True,
            "name": "Alice Example",
            "groups": ["sre"],
        }
    )
    issuer: str = ""
    keys: list[RSAKey] = field(default_factory=lambda: [_new_key()])
    codes: dict[str, Grant] = field(default_factory=dict)
    spoil: dict[str, Any] | None = None
    requests: list[str] = field(default_factory=list)  # "GET /path" of every request, in order
    last_authorize: dict[str, str] = field(default_factory=dict)
    _server: ThreadingHTTPServer | None = None

    # Control -------------------------------------------------------------------------------------------

    def gateway_settings(self, **extra: Any) -> dict[str, Any]:
        """A gateway's settings for sign-in at this provider (and ``extra`` settings)."""
        return {
            "threadgate_oidc_issuer": self.issuer,
            "threadgate_oidc_client_id": self.client_id,
            "threadgate_oidc_client_secret": self.client_secret,
            "threadgate_session_secret": "session-secret-for-tests-0123456789",
            **extra,
        }

    def start(self) -> FakeOidcProvider:
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                provider._handle(self, "GET")

            def do_POST(self) -> None:
                provider._handle(self, "POST")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.issuer = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def rotate(self, *, keep_old: bool = False) -> None:
        """A new signing key; the old one leaves the JWKS unless ``keep_old``."""
        self.keys = [_new_key(), *(self.keys if keep_old else [])]

    def spoil_next(self, **how: Any) -> None:
        """The next ID token is bad: ``aud=``, ``nonce=``, ``iss=`` override claims, ``expired=True``,
        ``unsigned=True`` (alg none), ``unknown_key=True``."""
        self.spoil = how

    def count(self, path: str) -> int:
        return sum(1 for line in self.requests if line.split(" ", 1)[1] == path)

    # Tokens --------------------------------------------------------------------------------------------

    def sign(self, claims: dict[str, Any], *, key: RSAKey | None = None, unsigned: bool = False) -> str:
        if unsigned:
            header = _b64(json.dumps({"alg": "none", "typ": "JWT"}).encode())
            return f"{header}.{_b64(json.dumps(claims).encode())}."
        key = key or self.keys[0]
        return jwt.encode({"alg": "RS256", "kid": key.kid, "typ": "JWT"}, claims, key)

    def id_token(self, grant: Grant) -> str:
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "aud": grant.client_id,
            "iat": now,
            "exp": now + 300,
            **grant.user,
        }
        if grant.nonce is not None:
            claims["nonce"] = grant.nonce
        how, self.spoil = self.spoil or {}, None
        for name in ("aud", "nonce", "iss"):
            if name in how:
                claims[name] = how[name]
        if how.get("expired"):
            claims["iat"], claims["exp"] = now - 7200, now - 3600
        if how.get("unknown_key"):
            return self.sign(claims, key=_new_key())
        return self.sign(claims, unsigned=bool(how.get("unsigned")))

    def access_token(self, *, client_id: str, audience: str, expired: bool = False, **extra: Any) -> str:
        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "aud": audience,
            "azp": client_id,
            "sub": f"client-{client_id}",
            "iat": now,
            "exp": now - 60 if expired else now + 300,
            **extra,
        }
        return self.sign(claims)

    # HTTP ----------------------------------------------------------------------------------------------

    def _handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        url = urlsplit(handler.path)
        self.requests.append(f"{method} {url.path}")
        query = {name: values[0] for name, values in parse_qs(url.query).items()}
        if method == "GET" and url.path == "/.well-known/openid-configuration":
            return self._json(handler, 200, self.discovery())
        if method == "GET" and url.path == "/jwks":
            return self._json(handler, 200, {"keys": [key.as_dict(private=False) for key in self.keys]})
        if method == "GET" and url.path == "/authorize":
            return self._authorize(handler, query)
        if method == "POST" and url.path == "/token":
            length = int(handler.headers.get("content-length") or 0)
            form = {name: values[0] for name, values in parse_qs(handler.rfile.read(length).decode()).items()}
            return self._token(handler, form)
        return self._json(handler, 404, {"error": "not_found"})

    def discovery(self) -> dict[str, Any]:
        return {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "jwks_uri": f"{self.issuer}/jwks",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
        }

    def _authorize(self, handler: BaseHTTPRequestHandler, query: dict[str, str]) -> None:
        self.last_authorize = query
        redirect_uri = query.get("redirect_uri", "")
        if query.get("client_id") != self.client_id or (
            self.redirect_uris and redirect_uri not in self.redirect_uris
        ):
            return self._json(handler, 400, {"error": "invalid_request"})
        code = secrets.token_urlsafe(16)
        self.codes[code] = Grant(
            self.client_id,
            redirect_uri,
            query.get("nonce"),
            query.get("code_challenge"),
            query.get("code_challenge_method"),
            dict(self.user),
        )
        back = f"{redirect_uri}?{urlencode({'code': code, 'state': query.get('state', '')})}"
        handler.send_response(302)
        handler.send_header("Location", back)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    def _token(self, handler: BaseHTTPRequestHandler, form: dict[str, str]) -> None:
        client_id, secret = form.get("client_id"), form.get("client_secret")
        basic = handler.headers.get("authorization", "")
        if basic.lower().startswith("basic "):
            client_id, _, secret = base64.b64decode(basic[6:]).decode().partition(":")
        if client_id != self.client_id or secret != self.client_secret:
            return self._json(handler, 401, {"error": "invalid_client"})
        grant = self.codes.pop(form.get("code", ""), None)
        if grant is None or form.get("grant_type") != "authorization_code":
            return self._json(handler, 400, {"error": "invalid_grant"})
        if form.get("redirect_uri") != grant.redirect_uri:
            return self._json(handler, 400, {"error": "invalid_grant", "error_description": "redirect_uri"})
        verifier = form.get("code_verifier", "")
        if grant.method != "S256" or _b64(hashlib.sha256(verifier.encode()).digest()) != grant.challenge:
            return self._json(handler, 400, {"error": "invalid_grant", "error_description": "PKCE"})
        self._json(
            handler,
            200,
            {
                "access_token": secrets.token_urlsafe(16),
                "token_type": "Bearer",
                "expires_in": 300,
                "id_token": self.id_token(grant),
            },
        )

    @staticmethod
    def _json(handler: BaseHTTPRequestHandler, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
