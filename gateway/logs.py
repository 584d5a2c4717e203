"""Structured logs: one event per line, a dotted event name, key=value fields, secrets redacted."""

from __future__ import annotations

import json
import logging
import re
import sys
from datetime import UTC, datetime
from typing import Any

LOGGER = logging.getLogger("threadgate")
_SECRETISH = re.compile(
    r"(xox[abpe]-[0-9A-Za-z-]+|xapp-[0-9A-Za-z-]+|\d{6,12}:[A-Za-z0-9_-]{30,}|Bearer\s+\S+"
    r"|[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,})"  # Discord bot tokens
)
_URL_PASSWORD = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^:/@\s]*:)[^@\s]+@")
# Server loggers whose lines join ours as JSON (uvicorn's own errors and lifecycle notes).
SERVER_LOGGERS = ("uvicorn", "uvicorn.error")


def redact(text: str) -> str:
    """Mask anything that looks like a platform token, a bearer credential or a password in a URL."""
    return _URL_PASSWORD.sub(r"\1***@", _SECRETISH.sub("***", text))


def event(name: str, level: int = logging.INFO, **fields: Any) -> None:
    """Log ``name`` with ``fields``; the JSON formatter renders them as one object per line."""
    LOGGER.log(level, name, extra={"fields": fields})


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        payload: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "event": record.getMessage(),
        }
        if record.name != LOGGER.name:
            payload["logger"] = record.name
        payload.update(getattr(record, "fields", {}) or {})
        if record.exc_info:
            payload["exc"] = self.formatException(record.exc_info)
        return redact(json.dumps(payload, default=str, ensure_ascii=False))


def configure(level: str = "INFO") -> None:
    """Send threadgate's events, and the HTTP server's warnings, to stderr as JSON lines at ``level``."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    LOGGER.handlers[:] = [handler]
    LOGGER.setLevel(level.upper())
    LOGGER.propagate = False
    for name in SERVER_LOGGERS:
        server = logging.getLogger(name)
        server.handlers[:] = [handler] if name == "uvicorn" else []
        server.setLevel(max(logging.WARNING, LOGGER.level))
        server.propagate = name != "uvicorn"
