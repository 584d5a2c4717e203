"""Sign-in state in Redis: logins under way (single use, minutes) and people's sessions (hours).

Keys are named by a keyed hash of the secret the browser holds (``gateway.people.signin``), never by the
secret itself: someone reading Redis cannot take over a session. Each is one key, so any Cluster slot will do.
"""

from __future__ import annotations

import json
from typing import Any

from gateway.store import keys


class SignIns:
    """Logins under way and sessions, each a JSON record that Redis expires."""

    def __init__(self, client: Any) -> None:
        self.redis = client

    async def begin_login(self, digest: str, record: dict[str, Any], ttl_s: int) -> None:
        await self.redis.set(keys.signin_login(digest), json.dumps(record), ex=ttl_s)

    async def take_login(self, digest: str) -> dict[str, Any] | None:
        """The login's record, deleted as it is read: a state is good for one callback."""
        raw = await self.redis.getdel(keys.signin_login(digest))
        return json.loads(raw) if raw else None

    async def put_session(self, digest: str, record: dict[str, Any], ttl_s: int) -> None:
        await self.redis.set(keys.signin_session(digest), json.dumps(record), ex=ttl_s)

    async def session(self, digest: str) -> dict[str, Any] | None:
        raw = await self.redis.get(keys.signin_session(digest))
        return json.loads(raw) if raw else None

    async def end_session(self, digest: str) -> bool:
        """Delete the session; whether there was one."""
        return bool(await self.redis.delete(keys.signin_session(digest)))
