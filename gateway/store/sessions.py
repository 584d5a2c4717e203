"""Session bindings in Redis: which thread an agent session's prompts go to, and who is starting it."""

from __future__ import annotations

from typing import Any

from gateway.store import keys

BINDING_TTL_S = 90 * 24 * 3600  # sliding: a session resumed weeks later still finds its thread

# Bind a call to a prompt unless another is bound already; ARGV[2] names a stale one it may replace.
_BIND_CALL = """
local current = redis.call('GET', KEYS[1])
if not current or current == ARGV[2] then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[3])
  return ARGV[1]
end
redis.call('EXPIRE', KEYS[1], ARGV[3])
return current
"""


class SessionBindings:
    """Session key → thread id, written once per session under a short claim."""

    def __init__(self, client: Any, *, ttl_s: int = BINDING_TTL_S) -> None:
        self.redis = client
        self.ttl_s = ttl_s

    async def get(self, session_key: str) -> str | None:
        """The session's thread, its lifetime renewed by the lookup; None when it has none yet."""
        thread_id: str | None = await self.redis.getex(keys.session_thread(session_key), ex=self.ttl_s)
        return thread_id

    async def claim(self, session_key: str, token: str, ttl_ms: int) -> bool:
        """True when this caller may start the session's thread (nobody else is doing it right now)."""
        return bool(await self.redis.set(keys.session_claim(session_key), token, nx=True, px=ttl_ms))

    async def bind(self, session_key: str, thread_id: str) -> None:
        await self.redis.set(keys.session_thread(session_key), thread_id, ex=self.ttl_s)

    async def call_prompt(self, session_key: str, call_id: str) -> str | None:
        """The prompt bound to one tool call of the session; None when none is."""
        prompt_id: str | None = await self.redis.getex(keys.session_call(session_key, call_id), ex=self.ttl_s)
        return prompt_id

    async def bind_call(
        self, session_key: str, call_id: str, prompt_id: str, replaces: str | None = None
    ) -> str:
        """Bind the call to ``prompt_id`` when it is unbound (or bound to ``replaces``); the bound prompt.

        Two processes asking about one call end up with one prompt: the second learns the first's.
        """
        key = keys.session_call(session_key, call_id)
        bound = await self.redis.eval(_BIND_CALL, 1, key, prompt_id, replaces or "", self.ttl_s)
        return str(bound)

    async def release(self, session_key: str, token: str) -> None:
        """Drop the claim if it is still this caller's (it may have expired and passed to another)."""
        if await self.redis.get(keys.session_claim(session_key)) == token:
            await self.redis.delete(keys.session_claim(session_key))
