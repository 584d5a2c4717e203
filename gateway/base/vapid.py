"""VAPID keys for Web Push (RFC 8292): a P-256 pair, the private key as base64url of its raw 32 bytes and
the public key as base64url of its uncompressed 65-byte point, the forms push tools print."""

from __future__ import annotations

import base64


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text.strip() + "=" * (-len(text.strip()) % 4))


def new_pair() -> tuple[str, str]:
    """A fresh (private, public) pair."""
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    private = key.private_numbers().private_value.to_bytes(32, "big")
    return _b64(private), public_of(_b64(private))


def public_of(private: str) -> str:
    """The public key of a private one; ValueError when ``private`` is not a P-256 key in that form."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    try:
        raw = _unb64(private)
    except (ValueError, TypeError) as exc:
        raise ValueError("not base64url") from exc
    if len(raw) != 32:
        raise ValueError(f"{len(raw)} bytes where a P-256 private key has 32")
    try:
        key = ec.derive_private_key(int.from_bytes(raw, "big"), ec.SECP256R1())
    except ValueError as exc:
        raise ValueError("not a P-256 private key") from exc
    point = key.public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    return _b64(point)
