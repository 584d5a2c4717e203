"""A Web Push service on a free port (RFC 8030, 8291, 8292), and a browser's subscription to it.

It checks what a real push service checks before it keeps a message: the ``Authorization: vapid t=<JWT>,
k=<key>`` header (an ES256 JWT signed by that key, ``aud`` the endpoint's origin, ``exp`` within a day,
a ``sub`` contact), ``TTL`` and ``Content-Encoding: aes128gcm``. The subscriber's side decrypts each body
with the subscription's private key and auth secret, as the browser would. An endpoint can be told to
answer 404 or 410 (the subscription expired) instead of 201.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import http_ece
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class Browser:
    """One browser's subscription: what ``PushSubscription.toJSON()`` gives, and the keys to read it."""

    endpoint: str
    key: ec.EllipticCurvePrivateKey = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))
    auth: bytes = field(default_factory=lambda: os.urandom(16))

    def subscription(self) -> dict[str, Any]:
        point = self.key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return {
            "endpoint": self.endpoint,
            "expirationTime": None,
            "keys": {"p256dh": b64(point), "auth": b64(self.auth)},
        }

    def read(self, body: bytes) -> dict[str, Any]:
        plain = http_ece.decrypt(body, private_key=self.key, auth_secret=self.auth, version="aes128gcm")
        return json.loads(plain)


@dataclass
class Delivered:
    path: str
    headers: dict[str, str]
    body: bytes
    claims: dict[str, Any]


def check_vapid(header: str, origin: str) -> dict[str, Any]:
    """The claims of a valid ``vapid t=…, k=…`` header for ``origin``; AssertionError says what is wrong."""
    assert header.startswith("vapid "), f"not a vapid Authorization: {header[:20]!r}"
    parts = dict(part.strip().split("=", 1) for part in header[len("vapid ") :].split(","))
    token, key = parts["t"], parts["k"]
    head, claims_b64, signature = token.split(".")
    assert (
        json.loads(unb64(head)) == {"typ": "JWT", "alg": "ES256"} or json.loads(unb64(head))["alg"] == "ES256"
    )
    public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64(key))
    raw = unb64(signature)
    assert len(raw) == 64, "ES256 signs with 64 raw bytes (r || s)"
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    public.verify(der, f"{head}.{claims_b64}".encode(), ec.ECDSA(hashes.SHA256()))
    claims = json.loads(unb64(claims_b64))
    assert claims["aud"] == origin, f"aud {claims['aud']!r} is not the push service's origin {origin!r}"
    assert time.time() < claims["exp"] <= time.time() + 24 * 3600, "exp must be within 24 hours"
    assert str(claims.get("sub", "")).startswith(("mailto:", "https://")), "sub is a contact"
    claims["k"] = key
    return claims


@dataclass
class FakePushService:
    """The push service's state; ``start()`` serves it on 127.0.0.1 and sets ``origin``."""

    origin: str = ""
    delivered: list[Delivered] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # why each refused request was refused
    gone: dict[str, int] = field(default_factory=dict)  # path -> 404 or 410
    server_keys: dict[str, str] = field(default_factory=dict)  # path -> the applicationServerKey it took
    _server: ThreadingHTTPServer | None = None

    def browser(self, server_key: str | None = None) -> Browser:
        """A new subscription; made with ``server_key``, only messages signed by that key are taken (403)."""
        path = f"/push/{secrets.token_urlsafe(12)}"
        if server_key is not None:
            self.server_keys[path] = server_key
        return Browser(f"{self.origin}{path}")

    def start(self) -> FakePushService:
        service = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                status = service.receive(self.path, dict(self.headers.items()), body)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def receive(self, path: str, headers: dict[str, str], body: bytes) -> int:
        if path in self.gone:
            return self.gone[path]
        lower = {name.lower(): value for name, value in headers.items()}
        try:
            claims = check_vapid(lower.get("authorization", ""), self.origin)
            assert lower.get("content-encoding") == "aes128gcm", "the body is aes128gcm (RFC 8291)"
            assert int(lower.get("ttl", "-1")) >= 0, "a TTL header is required"
        except (AssertionError, KeyError, ValueError) as exc:
            self.refused.append(str(exc) or type(exc).__name__)
            return 401 if "vapid" in str(exc) else 400
        if path in self.server_keys and claims["k"] != self.server_keys[path]:
            self.refused.append("signed by a key this subscription was not made for")
            return 403
        self.delivered.append(Delivered(path, lower, body, claims))
        return 201

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
