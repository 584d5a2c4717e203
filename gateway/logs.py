"""Structured logs: one event per line, a dotted event name, key=value fields, secrets redacted."""

from __future__ import annotations

import json
import logging
import re
import sys
from typing import Any

LOGGER = logging.getLogger("threadgate")
_SECRETISH = re.compile(
    r"(xox[abpe]-[0-9A-Za-z-]+|xapp-[0-9A-Za-z-]+|\d{6,12}:[A-Za-z0-9_-]{30,}|Bearer\s+\S+)"
)


def redact(text: str) -> str:
    """Mask anything that looks like a platform token or a bearer credential."""
    return _SECRETISH.sub("***", text)


def event(name: str, level: int = logging.INFO, **fields: Any) -> None:
    """Log ``name`` with ``fields``; the JSON formatter renders them as one object per line."""
    LOGGER.log(level, name, extra={"fields": fields})


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        payload: dict[str, Any] = {
            "ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname.lower(),
            "event": record.getMessage(),
        }
        payload.update(getattr(record, "fields", {}) or {})
        if record.exc_info:
            payload["exc"] = self.formatException(record.exc_info)
        return redact(json.dumps(payload, default=str, ensure_ascii=False))


def configure(level: str = "INFO") -> None:
    """Send threadgate's events to stderr as JSON lines at ``level``."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    LOGGER.handlers[:] = [handler]
    LOGGER.setLevel(level.upper())
    LOGGER.propagate = False
