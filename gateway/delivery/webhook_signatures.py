"""Standard Webhooks signatures (``webhook-id``, ``webhook-timestamp``, ``webhook-signature``) on outgoing
deliveries, so a receiver verifies them with an off-the-shelf library in any language.

The signing key comes from ``THREADGATE_WEBHOOK_SECRET``: a ``whsec_<base64>`` secret is used as Standard
Webhooks defines it (the base64-decoded bytes); any other secret's UTF-8 bytes are the key, which a
receiver passes as ``"whsec_" + base64(secret)``.
"""

from __future__ import annotations

import base64
import binascii
import time
from collections.abc import Mapping
from datetime import UTC, datetime

from standardwebhooks import Webhook

from gateway.base.signed import same_text, unix_seconds

STANDARD_PREFIX = "whsec_"
TOLERANCE_S = 300
MAX_SIGNATURES = 16


def standard_key(secret: str) -> bytes:
    """The key bytes for ``secret``; raises ValueError for a ``whsec_`` secret that is not base64."""
    if secret.startswith(STANDARD_PREFIX):
        encoded = secret.removeprefix(STANDARD_PREFIX)
        try:
            key = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True)
        except binascii.Error:
            raise ValueError(
                "THREADGATE_WEBHOOK_SECRET starts with whsec_ but the rest is not base64: fix the secret"
            ) from None
    else:
        key = secret.encode()
    if not key:
        raise ValueError("THREADGATE_WEBHOOK_SECRET is empty: set a secret")
    return key


def receiver_secret(secret: str) -> str:
    """The ``whsec_…`` form of ``secret`` that a receiver gives its Standard Webhooks library."""
    if secret.startswith(STANDARD_PREFIX):
        return secret
    return STANDARD_PREFIX + base64.b64encode(secret.encode()).decode()


def standard_headers(key: bytes, message_id: str, body: bytes, timestamp: int) -> dict[str, str]:
    """The three Standard Webhooks headers for one delivery; ``message_id`` stays the same on retries."""
    when = datetime.fromtimestamp(timestamp, tz=UTC)
    signature = Webhook(key).sign(message_id, when, body.decode())
    return {"webhook-id": message_id, "webhook-timestamp": str(timestamp), "webhook-signature": signature}


def verify_standard(
    key: bytes,
    headers: Mapping[str, str],
    body: bytes,
    *,
    tolerance_s: int = TOLERANCE_S,
    now: float | None = None,
) -> bool:
    """Check a delivery's Standard Webhooks headers (for receivers; constant time).

    Unlike the library's ``Webhook.verify``, which raises on a signature without a comma or with bad
    base64, this answers False for anything it cannot read.
    """
    lowered = {name.lower(): value for name, value in headers.items()}
    message_id = lowered.get("webhook-id")
    stamp = unix_seconds(lowered.get("webhook-timestamp"))
    if not message_id or stamp is None or abs((time.time() if now is None else now) - stamp) > tolerance_s:
        return False
    try:
        text = body.decode()
    except UnicodeDecodeError:
        return False
    try:
        expected = Webhook(key).sign(message_id, datetime.fromtimestamp(stamp, tz=UTC), text)
    except UnicodeEncodeError:  # an id no HTTP header could carry
        return False
    presented = lowered.get("webhook-signature", "").split(" ")[:MAX_SIGNATURES]
    return any(same_text(candidate, expected) for candidate in presented)
