"""Every log record written while a block runs: ours, uvicorn's (which does not propagate) and libraries'."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

from gateway.base.logs import JsonFormatter

WATCHED = ("", "uvicorn", "uvicorn.error", "uvicorn.access", "threadgate")


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if not any(seen is record for seen in self.records):
            self.records.append(record)


@contextlib.contextmanager
def captured_logs() -> Iterator[list[logging.LogRecord]]:
    """Yield the list that fills with each record logged (once each) until the block ends."""
    handler = _Records()
    loggers = [logging.getLogger(name) for name in WATCHED]
    for logger in loggers:
        logger.addHandler(handler)
    try:
        yield handler.records
    finally:
        for logger in loggers:
            logger.removeHandler(handler)


def assert_short_lines(records: list[logging.LogRecord], max_chars: int = 500) -> None:
    """Each record, as the JSON formatter writes it, is one short line with no traceback."""
    formatter = JsonFormatter()
    for record in records:
        line = formatter.format(record)
        assert record.exc_info is None, f"{record.name} logged a traceback: {line[:300]}"
        assert "\n" not in line and len(line) <= max_chars, f"{record.name}: {line[:300]}…"
