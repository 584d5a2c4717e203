"""JSON text on the hot paths, written by orjson (one C pass) where it can, by ``json`` where it cannot.

orjson will not write a lone surrogate, an integer wider than 64 bits or a key that is not text: those
go through ``json``, so the document is the same either way, written compactly (no spaces after
separators) with non-ASCII characters as they are. orjson writes NaN and infinities as null, where
``json`` writes ``NaN``: a value the store keeps is finite (``gateway.base.storable``), so callers pass
only such values.
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def dumps(value: Any) -> str:
    """``value`` as compact JSON text."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # orjson.JSONEncodeError is one: a value orjson will not write
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
