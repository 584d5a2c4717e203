"""The web chat's settings (``THREADGATE_WEB_*``): whether it runs, who signs in, what a visitor may write."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr, field_validator

from gateway.sdk import PlatformSettings


class WebSettings(PlatformSettings):
    threadgate_web_chat: Literal["off", "on", "open"] = "off"
    threadgate_web_token: SecretStr | None = None
    # Posts per name and per client address in each window; new rooms per client address.
    threadgate_web_posts_per_name: int = Field(default=20, ge=1)
    threadgate_web_posts_per_client: int = Field(default=60, ge=1)
    threadgate_web_post_window_s: int = Field(default=10, ge=1, le=86_400)
    threadgate_web_new_rooms_per_client: int = Field(default=20, ge=1)
    threadgate_web_new_room_window_s: int = Field(default=3_600, ge=1, le=86_400)
    # Open chat streams per web token (per visitor address in open mode) and in all, in each process:
    # counted apart from agents' API streams, so visitors never take an agent's room.
    threadgate_max_browser_streams_per_client: int = Field(default=100, ge=1)
    threadgate_max_browser_streams: int = Field(default=2_000, ge=1)
    # How often an idle chat stream says it is still there (proxies close silent connections).
    threadgate_web_heartbeat_s: float = Field(default=15.0, gt=0, le=300)
    # A room that sends each visitor on to a room of their own, <room>-<name> (threadgate demo's room).
    threadgate_web_lobby: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_-]{1,64}$")

    @field_validator("threadgate_web_lobby", mode="before")
    @classmethod
    def _no_lobby(cls, value: object) -> object:
        """An empty value (as in ``.env.example``) is no lobby."""
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("threadgate_web_chat", mode="before")
    @classmethod
    def _web_chat_mode(cls, value: object) -> object:
        """``true``/``false`` read as ``on``/``off``; ``open`` lets anyone pick a name (no token)."""
        text = str(value).strip().lower()
        if text in ("1", "true", "yes", "on"):
            return "on"
        if text in ("0", "false", "no", "off", ""):
            return "off"
        return text
