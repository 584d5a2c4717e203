"""Settings from the environment and ``.env`` (contract §4). Secrets are SecretStr: never printed."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from gateway.base import vapid
from gateway.base.hosts import host_name

ROLES = ("agent", "operator")
EVERY_AGENT = "*"
AGENT_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}", re.ASCII)
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
DAY_S = 24 * 3600
# What gateway.store.connect opens: a server or a socket (redis-py's own schemes), or a cluster.
REDIS_SCHEMES = ("redis://", "rediss://", "unix://", "redis+cluster://", "rediss+cluster://")
API_TOKENS_EXAMPLE = "my-agent:agent:<secret>,ops-desk:operator:<secret>"


@dataclass(frozen=True, slots=True)
class ApiToken:
    """One ``THREADGATE_API_TOKENS`` entry. ``agents`` None: every agent (``*``, or an unscoped operator)."""

    name: str
    role: str
    token: SecretStr
    agents: frozenset[str] | None = None


def _token_agents(index: int, name: str, role: str, field: str | None) -> frozenset[str] | None:
    """The fourth field: ``ops|deploy`` or ``*``. Without it an agent token acts for the agent named like
    it, an operator token for every agent."""
    if field is None:
        return frozenset({name}) if role == "agent" else None
    if field == EVERY_AGENT:
        return None
    agents = field.split("|")
    if not all(AGENT_NAME.fullmatch(agent) for agent in agents):
        raise ValueError(
            f"THREADGATE_API_TOKENS entry {index}: the agents field is agent names separated by | "
            "(letters, digits, . _ -) or *; a token itself cannot contain ':'"
        )
    return frozenset(agents)


class Settings(BaseSettings):
    """Every knob the core reads. Field names are the environment variable names, lower-cased.

    Each platform reads its own (``gateway.delivery.plugins.platform_settings``); keyword arguments named
    like them
    are kept here as extras and handed on, so ``Settings(<platform setting>=…)`` configures a platform.
    """

    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="allow", env_ignore_empty=True
    )

    redis_url: str | None = None
    threadgate_api_tokens: SecretStr | None = None
    threadgate_host: str = "127.0.0.1"
    threadgate_port: int = Field(default=8787, ge=1, le=65535)
    # processes serving the port: a number or "auto" (see gateway.process.workers)
    threadgate_workers: str = "1"
    threadgate_log_level: str = "INFO"
    threadgate_webhooks: str | None = None
    threadgate_webhook_secret: SecretStr | None = None
    threadgate_lease_ttl_ms: int = Field(default=15_000, ge=1_000, le=300_000)
    threadgate_shutdown_grace_s: int = Field(default=10, ge=0, le=600)
    threadgate_max_streams_per_token: int = Field(default=1_000, ge=1)
    threadgate_max_streams: int = Field(default=20_000, ge=1)
    threadgate_mcp_sessions_per_token: int = Field(default=100, ge=1)  # open /mcp sessions per API token
    threadgate_redis_connections: int = Field(default=64, ge=4, le=4096)
    # How long what Redis holds lives (docs/operations.md, "What Redis keeps, and for how long").
    threadgate_retain_seconds: int = Field(default=30 * DAY_S, ge=60)
    threadgate_thread_idle_seconds: int = Field(default=30 * DAY_S, ge=60)
    threadgate_stream_retention_seconds: int = Field(default=7 * DAY_S, ge=60)
    threadgate_stream_max_entries: int = Field(default=100_000, ge=1_000)
    threadgate_outbox_lock_ms: int = Field(default=10_000, ge=1_000, le=300_000)
    # Once-markers: a platform event's or a chat post's id (its redeliveries are dropped), a feed entry's id
    # (a second drain appends nothing).
    threadgate_dedupe_seconds: int = Field(default=2 * DAY_S, ge=1)
    threadgate_feed_once_seconds: int = Field(default=3600, ge=1)
    # The audit history of settled prompts (GET /v1/history): kept this many days, about this many records.
    threadgate_history_days: int = Field(default=90, ge=1, le=3650)
    threadgate_history_max_entries: int = Field(default=250_000, ge=1_000)

    threadgate_public_url: str | None = None  # where people open the gateway, when a proxy fronts it
    threadgate_allowed_hosts: str | None = None  # more names the gateway is reached at (Host header)
    threadgate_trusted_proxies: str | None = None  # whose X-Forwarded-For / -Proto are believed
    threadgate_webhooks_allow_private: bool = False

    # Sign-in with the organisation's identity provider (OIDC; docs/people.md, "Sign-in").
    threadgate_oidc_issuer: str | None = None
    threadgate_oidc_client_id: str | None = None
    threadgate_oidc_client_secret: SecretStr | None = None
    threadgate_oidc_scopes: str = "openid email profile"
    threadgate_oidc_groups_claim: str = "groups"
    threadgate_session_secret: SecretStr | None = None
    threadgate_session_hours: int = Field(default=12, ge=1, le=24 * 90)
    # How long a claim on a prompt holds (POST /v1/prompts/{id}/claim, "claim" typed, the Claim control).
    threadgate_claim_seconds: int = Field(default=900, ge=1, le=7 * 24 * 3600)
    # MCP clients that sign in at the issuer, and the agents each acts for: client_id:agent1|agent2,...
    threadgate_oauth_clients: str | None = None
    # Web Push to signed-in people's browsers (docs/push.md): the VAPID private key as base64url of its raw
    # 32 bytes (``threadgate push keys`` prints a pair), and the contact the push services may reach.
    threadgate_vapid_private_key: SecretStr | None = None
    threadgate_vapid_subject: str | None = None
    # Push services beyond the browsers' own (Google, Mozilla, Apple, Microsoft) that subscriptions may name:
    # host names, comma-separated; a host named here may also be plain http (a push service of your own).
    threadgate_push_hosts: str | None = None

    @field_validator("threadgate_log_level")
    @classmethod
    def _known_level(cls, value: str) -> str:
        level = value.strip().upper()
        if level not in LOG_LEVELS:
            raise ValueError(f"THREADGATE_LOG_LEVEL must be one of {', '.join(LOG_LEVELS)}")
        return level

    @field_validator("threadgate_workers")
    @classmethod
    def _workers(cls, value: str) -> str:
        from gateway.base.cores import worker_count

        worker_count(value, "THREADGATE_WORKERS")  # a ValueError names what it takes
        return value.strip().lower()

    @field_validator("threadgate_public_url")
    @classmethod
    def _public_url(cls, value: str | None) -> str | None:
        parts = urlsplit(value.strip()) if value else None
        if parts is not None and (parts.scheme not in ("http", "https") or not parts.hostname):
            raise ValueError(
                "THREADGATE_PUBLIC_URL must be an absolute http(s) URL, such as https://gw.example.com"
            )
        return value.strip() if value else None

    @field_validator("redis_url")
    @classmethod
    def _redis_url(cls, value: str | None) -> str | None:
        if value is not None and not value.strip().lower().startswith(REDIS_SCHEMES):
            raise ValueError(
                f"REDIS_URL must start with one of {', '.join(REDIS_SCHEMES)} (such as "
                "redis://127.0.0.1:6379/0); unset it for the embedded store"
            )
        return value.strip() if value is not None else None

    @field_validator("threadgate_trusted_proxies")
    @classmethod
    def _trusted_proxies(cls, value: str | None) -> str | None:
        for entry in _entries(value):
            try:
                ipaddress.ip_network(entry, strict=False)
            except ValueError:
                raise ValueError(
                    f"THREADGATE_TRUSTED_PROXIES: {entry!r} is not an IP address or network (such as "
                    "10.0.0.7 or 10.0.0.0/8)"
                ) from None
        return value

    @field_validator("threadgate_allowed_hosts")
    @classmethod
    def _allowed_hosts(cls, value: str | None) -> str | None:
        for entry in _entries(value):
            if entry != "*" and host_name(entry) is None:
                raise ValueError(
                    f"THREADGATE_ALLOWED_HOSTS: {entry!r} is not a host name or IP address (such as "
                    "gw.example.com or 10.0.0.7; no scheme or path), or *"
                )
        return value

    @field_validator("threadgate_oidc_issuer")
    @classmethod
    def _issuer(cls, value: str | None) -> str | None:
        parts = urlsplit(value.strip()) if value else None
        if parts is not None and (parts.scheme not in ("http", "https") or not parts.hostname):
            raise ValueError(
                "THREADGATE_OIDC_ISSUER must be the issuer's absolute https URL, such as "
                "https://accounts.google.com"
            )
        return value.strip() if value else None

    @field_validator("threadgate_oauth_clients")
    @classmethod
    def _oauth_clients(cls, value: str | None) -> str | None:
        oauth_clients(value)  # a ValueError names the entry
        return value

    @model_validator(mode="after")
    def _vapid(self) -> Settings:
        key = self.threadgate_vapid_private_key
        if key is None:
            return self
        try:
            vapid.public_of(key.get_secret_value())
        except ValueError as exc:
            raise ValueError(
                f"THREADGATE_VAPID_PRIVATE_KEY is not a VAPID private key ({exc}): use the private key "
                "`threadgate push keys` prints"
            ) from None
        if not (self.threadgate_vapid_subject or "").startswith(("mailto:", "https://")):
            raise ValueError(
                "THREADGATE_VAPID_SUBJECT is required with THREADGATE_VAPID_PRIVATE_KEY: a mailto: address "
                "or https:// URL where push services can reach the operator"
            )
        return self

    @model_validator(mode="after")
    def _session_secret(self) -> Settings:
        if self.threadgate_oidc_issuer and not self.threadgate_session_secret:
            raise ValueError(
                "THREADGATE_SESSION_SECRET is required when THREADGATE_OIDC_ISSUER is set: a long random "
                "string (python -c 'import secrets; print(secrets.token_urlsafe(32))')"
            )
        return self

    @field_validator(
        "redis_url",
        "threadgate_webhooks",
        "threadgate_public_url",
        "threadgate_oidc_issuer",
        "threadgate_oauth_clients",
        "threadgate_vapid_private_key",
        "threadgate_vapid_subject",
        mode="before",
    )
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        """The core's fields only: a platform's extras are plain text (tokens too) until it reads them."""
        extras = self.model_extra or {}
        return ((name, value) for name, value in super().__repr_args__() if name not in extras)

    def api_tokens(self) -> list[ApiToken]:
        """``THREADGATE_API_TOKENS`` parsed: ``name:role:token[:agents]`` entries separated by commas."""
        raw = self.threadgate_api_tokens.get_secret_value() if self.threadgate_api_tokens else ""
        tokens: list[ApiToken] = []
        for index, entry in enumerate(filter(None, (part.strip() for part in raw.split(","))), start=1):
            parts = entry.split(":", 3)
            if len(parts) < 3 or not (parts[0] and parts[2]) or parts[1] not in ROLES:
                raise ValueError(
                    f"THREADGATE_API_TOKENS entry {index} is not name:role:token[:agents] with role agent "
                    "or operator"
                )
            name, role, token = parts[:3]
            agents = _token_agents(index, name, role, parts[3] if len(parts) == 4 else None)
            tokens.append(ApiToken(name, role, SecretStr(token), agents))
        return tokens

    def trusted_proxies(self) -> list[str]:
        """``THREADGATE_TRUSTED_PROXIES`` as canonical addresses and networks (``10.0.0.0/8``)."""
        return [
            str(ipaddress.ip_network(entry, strict=False))
            if "/" in entry
            else str(ipaddress.ip_address(entry))
            for entry in _entries(self.threadgate_trusted_proxies)
        ]

    def allowed_hosts(self) -> list[str]:
        """``THREADGATE_ALLOWED_HOSTS`` as host names (ports dropped), ``*`` kept as it is."""
        return [
            entry if entry == "*" else host_name(entry) or entry
            for entry in _entries(self.threadgate_allowed_hosts)
        ]

    def signin_configured(self) -> bool:
        """Whether people sign in at the identity provider: issuer, client id and secret all set."""
        return bool(
            self.threadgate_oidc_issuer
            and self.threadgate_oidc_client_id
            and self.threadgate_oidc_client_secret
        )

    def oauth_clients(self) -> dict[str, frozenset[str]]:
        """``THREADGATE_OAUTH_CLIENTS``: each OAuth client id and the agents its access tokens act for."""
        return oauth_clients(self.threadgate_oauth_clients)

    def webhook_urls(self) -> list[str]:
        return [url.strip() for url in (self.threadgate_webhooks or "").split(",") if url.strip()]


def oauth_clients(value: str | None) -> dict[str, frozenset[str]]:
    """``client_id:agent1|agent2,...`` parsed; a ValueError naming the entry that is not."""
    clients: dict[str, frozenset[str]] = {}
    for index, entry in enumerate(_entries(value), start=1):
        client_id, _, field = entry.rpartition(":")
        agents = field.split("|")
        if not client_id or not all(AGENT_NAME.fullmatch(agent) for agent in agents):
            raise ValueError(
                f"THREADGATE_OAUTH_CLIENTS entry {index} is not client_id:agent1|agent2 (agent names: "
                "letters, digits, . _ -)"
            )
        clients[client_id] = frozenset(agents)
    return clients


def settings_problems(exc: ValidationError) -> str:
    """A settings error on one line, each problem led by the variable it is about."""
    problems = []
    for error in exc.errors():
        name = ".".join(str(part) for part in error["loc"]).upper()
        message = str(error["msg"]).removeprefix("Value error, ")
        problems.append(message if not name or message.startswith(name) else f"{name}: {message}")
    return "; ".join(problems)


def _entries(value: str | None) -> list[str]:
    """A comma-separated setting's entries, blanks dropped."""
    return [entry.strip() for entry in (value or "").split(",") if entry.strip()]
