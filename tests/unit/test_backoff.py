"""How long a platform asks us to wait: ``Retry-After`` read as seconds or an HTTP date, never trusted."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.base.backoff import retry_after

NOW = 1_700_000_000.0  # Tue, 14 Nov 2023 22:13:20 GMT


@pytest.mark.parametrize(
    ("headers", "wait"),
    [
        ({"Retry-After": "3"}, 3.0),
        ({"Retry-After": "0.5"}, 0.5),
        ({"Retry-After": "-4"}, 0.0),
        ({"Retry-After": "Tue, 14 Nov 2023 22:13:50 GMT"}, 30.0),
        ({"Retry-After": "Tue, 14 Nov 2023 22:13:00 GMT"}, 0.0),  # a date past is no wait
        ({"Retry-After": "soon"}, None),
        ({"Retry-After": "nan"}, None),
        ({"Retry-After": "inf"}, None),
        ({"Retry-After": ["3"]}, None),
        ({}, None),
        (None, None),
    ],
)
def test_retry_after_reads_seconds_or_a_date_and_nothing_else(
    headers: dict[str, Any] | None, wait: float | None
) -> None:
    assert retry_after(headers, now=NOW) == wait
