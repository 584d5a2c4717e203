"""Slack's request signature, checked on the raw bytes before Bolt parses anything, and the body's shape.

Slack signs ``v0:<timestamp>:<body>`` with the app's signing secret (HMAC-SHA256). The timestamp must be
plain digits of sane length within five minutes of now, and the signature is compared in constant time.
Only then is the body parsed, the way Bolt will parse it, within limits: a signed body Bolt could not
read is a 400, never a failure inside the SDK.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Mapping
from urllib.parse import parse_qsl

from gateway.sdk import GatewayError, fresh, parse_json, same_text

MAX_SKEW_S = 300
MAX_DEPTH = 64
MAX_FORM_FIELDS = 100
TIMESTAMP_HEADER = "x-slack-request-timestamp"
SIGNATURE_HEADER = "x-slack-signature"


def signature_of(secret: str, timestamp: str, body: bytes) -> str:
    digest = hmac.new(secret.encode(), f"v0:{timestamp}:".encode() + body, hashlib.sha256).hexdigest()
    return f"v0={digest}"


def fresh_timestamp(value: str | None, now: float) -> bool:
    """Plain ASCII digits, at most 12 of them, within ``MAX_SKEW_S`` of ``now``."""
    return fresh(value, now, MAX_SKEW_S)


def is_signed(secret: str, headers: Mapping[str, str], body: bytes, now: float | None = None) -> bool:
    """True when ``body`` carries a fresh, valid Slack signature made with ``secret``."""
    timestamp = headers.get(TIMESTAMP_HEADER)
    if not fresh_timestamp(timestamp, time.time() if now is None else now):
        return False
    assert timestamp is not None
    return same_text(headers.get(SIGNATURE_HEADER), signature_of(secret, timestamp, body))


def _not_slack(message: str) -> GatewayError:
    return GatewayError("INVALID_PARAMS", message, 400)


def check_body(body: bytes, content_type: str | None) -> None:
    """Refuse (400) a signed body that is not what Slack sends: a JSON object, or a form (``payload=``)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise _not_slack("The body is not UTF-8.") from None
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if media == "application/json" or text.startswith("{"):  # as Bolt decides
        value = parse_json(body, max_depth=MAX_DEPTH)
        if not isinstance(value, dict):
            raise _not_slack("The body is not a Slack event (a JSON object).")
        return
    try:
        fields = parse_qsl(text, keep_blank_values=True, max_num_fields=MAX_FORM_FIELDS)
    except ValueError:
        raise _not_slack("The form body has too many fields.") from None
    payload = dict(fields).get("payload")
    if payload is not None and not isinstance(parse_json(payload.encode(), max_depth=MAX_DEPTH), dict):
        raise _not_slack("The form's payload is not a Slack payload (a JSON object).")
