"""Reading a feed back in tests: the stream's entries as the agent receives them."""

from __future__ import annotations

import json
from typing import Any


async def feed_entries(redis: Any, stream: str, limit: int = 100) -> list[dict[str, Any]]:
    """The first ``limit`` entries of the feed ``stream``, decoded."""
    return [json.loads(fields["j"]) for _, fields in await redis.xrange(stream, count=limit)]
