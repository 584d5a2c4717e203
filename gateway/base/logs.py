"""Structured logs: one event per line, a dotted event name, key=value fields, secrets redacted."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sys
import threading
import traceback
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

from gateway.base import platforms

LOGGER = logging.getLogger("threadgate")
_BEARER = re.compile(r"Bearer\s+\S+")
_URL_PASSWORD = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^:/@\s]*:)[^@\s]+@")
# Server loggers whose lines join ours as JSON (uvicorn's own errors and lifecycle notes).
SERVER_LOGGERS = ("uvicorn", "uvicorn.error")
# A library's message is cut here: some put whole payloads (people's words, ids) into their messages.
LIBRARY_MESSAGE_CHARS = 500


def redact(text: str) -> str:
    """Mask anything shaped like an installed platform's token, a bearer credential or a URL's password."""
    for platform in platforms.installed():
        for secret in platform.secrets:
            text = secret.sub("***", text)
    return _URL_PASSWORD.sub(r"\1***@", _BEARER.sub("***", text))


def event(name: str, level: int = logging.INFO, **fields: Any) -> None:
    """Log ``name`` with ``fields``; the JSON formatter renders them as one object per line."""
    LOGGER.log(level, name, extra={"fields": fields})


def failure(exc: BaseException | None, *, with_traceback: bool = False) -> dict[str, Any]:
    """Log fields for an exception: its type, and with ``with_traceback`` (a bug rather than bad input)
    its traceback folded into one field."""
    if exc is None:
        return {}
    fields: dict[str, Any] = {"error": type(exc).__name__}
    if with_traceback:
        fields["traceback"] = "".join(traceback.format_exception(exc)).rstrip()
    return fields


class JsonFormatter(logging.Formatter):
    """Every record as one JSON object on one line: ours with their fields, a library's with its logger
    name, its message (cut short) and any traceback folded into the ``exc`` field. ``always`` are fields
    every line carries (a ``serve --workers`` worker's number)."""

    def __init__(self, always: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.always = always or {}

    def format(self, record: logging.LogRecord) -> str:
        ours = record.name == LOGGER.name
        try:
            message = record.getMessage()
        except Exception:  # a library's format string that does not match its arguments
            message = str(record.msg)
        if not ours and len(message) > LIBRARY_MESSAGE_CHARS:
            message = message[:LIBRARY_MESSAGE_CHARS] + "…"
        payload: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "event": message,
        }
        if not ours:
            payload["logger"] = record.name
        payload.update(self.always)
        payload.update(getattr(record, "fields", {}) or {})
        if record.exc_info and record.exc_info[1] is not None:
            payload.setdefault("error", type(record.exc_info[1]).__name__)
            payload["exc"] = self.formatException(record.exc_info)
        return redact(json.dumps(payload, default=str, ensure_ascii=False))


def configure(level: str = "INFO", *, worker: int | None = None) -> None:
    """Send every log line to stderr as JSON: threadgate's events at ``level``, the libraries' (the HTTP
    server, the platform SDKs, asyncio, Python warnings) at WARNING and above, and uncaught exceptions.
    A worker of ``serve --workers`` names itself on every line."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter({"worker": worker} if worker is not None else None))
    LOGGER.handlers[:] = [handler]
    LOGGER.setLevel(level.upper())
    LOGGER.propagate = False
    libraries = max(logging.WARNING, LOGGER.level)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(libraries)
    for name in SERVER_LOGGERS:
        server = logging.getLogger(name)
        server.handlers[:] = []
        server.setLevel(libraries)
        server.propagate = True
    logging.captureWarnings(True)
    sys.excepthook = _log_uncaught
    threading.excepthook = _log_thread_crash


def observe_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Log what the event loop would print on its own (a task that died with nobody awaiting it) as one
    JSON line, with the task's name."""
    loop.set_exception_handler(_log_loop_exception)


def _log_loop_exception(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    subject = context.get("task") or context.get("future")
    name = subject.get_name() if isinstance(subject, asyncio.Task) else None
    event(
        "asyncio.unobserved_error",
        logging.ERROR,
        message=context.get("message"),
        task=name,
        **failure(context.get("exception"), with_traceback=True),
    )


def _log_uncaught(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
    event("process.crashed", logging.CRITICAL, **failure(exc.with_traceback(tb), with_traceback=True))


def _log_thread_crash(args: threading.ExceptHookArgs) -> None:
    thread = args.thread.name if args.thread is not None else None
    event("thread.crashed", logging.ERROR, thread=thread, **failure(args.exc_value, with_traceback=True))
