"""A chat platform is a plugin: a ``ChannelSpec`` found through the ``threadgate.channels`` entry points.

A package exports one spec from a light module (no platform SDK imported at module level) and names it in
its ``pyproject.toml``::

    [project.entry-points."threadgate.channels"]
    acme = "acme_threadgate.spec:SPEC"

The core reads thread ids, channel references, identities, settings, doctor checks and log redaction from
the specs; it names no platform itself (docs/channels/plugins.md).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING, Any

from pydantic_settings import BaseSettings, SettingsConfigDict

from gateway.base import platforms
from gateway.base.checks import Check

if TYPE_CHECKING:
    from gateway.base.settings import Settings
    from gateway.delivery.channel import ChannelRuntime


class PlatformSettings(BaseSettings):
    """A base for a platform's settings: read like the core's (environment, then ``.env``; blank is unset)."""

    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", env_ignore_empty=True
    )


@dataclass(frozen=True, slots=True)
class LocalChat:
    """How ``threadgate demo`` runs a platform that needs no outside service, on one machine: with open
    sign-in (anyone there picks a name) and a lobby room that sends each visitor on to a room of their own.
    Rooms are the coordinates of the platform's thread ids (``<name>:<room>``)."""

    build: Callable[[str, float], ChannelRuntime]  # (lobby, heartbeat_s): the channel, open, on this lobby
    visitor_room: Callable[[str, str], str]  # (lobby, person's name): the room the lobby sends them to
    room_url: Callable[[str, str], str]  # (the gateway's base URL, room): where a person opens the room


@dataclass(frozen=True, slots=True)
class ChannelSpec:
    """One platform: its grammar, its settings and how to build, check and redact it."""

    name: str  # the prefix of its thread ids, channel references and identities
    title: str  # for people: "Acme Chat"
    threads: re.Pattern[str]  # fullmatch of a thread id; its groups are the coordinates (ThreadRef.parts)
    channels: re.Pattern[str]  # fullmatch of a channel reference where a session's header starts a thread
    people: re.Pattern[str]  # fullmatch of a person's identity
    thread_example: str  # "acme:<room_id>:<thread_id>", in error messages
    channel_example: str
    person_example: str
    settings: type[BaseSettings]  # its own environment variables
    enabled: Callable[[Any], bool]  # from an instance of ``settings``: whether to run it
    build: Callable[[Any], ChannelRuntime]  # imports the platform's SDK here, lazily
    doctor: Callable[[Any], Awaitable[list[Check]]] | None = None
    # Settings that cannot work, without calling the platform (a token of the wrong shape, one of a pair
    # set alone): ``serve`` prints each as a warning, ``doctor`` reports it. Empty when nothing is set.
    check_settings: Callable[[Any], list[Check]] | None = None
    secrets: tuple[re.Pattern[str], ...] = ()  # token shapes the logs redact
    local: LocalChat | None = None  # needs no outside service: what ``threadgate demo`` serves, and how
    # Its HTTP routes mount under ``/<name>/``; ``paths`` adds public prefixes a platform is already
    # configured with (a chat page's ``/chat/``). No prefix may take a path of the core's.
    paths: tuple[str, ...] = ()
    # People's browsers write to its routes (pages it serves): a write from another site's page is refused
    # on all of its prefixes (403 CROSS_SITE_REQUEST), as on the gateway's own API.
    same_origin: bool = False
    # The distribution extra that installs its SDK (``acme`` for ``threadgate[acme]``): named in the one
    # line ``serve`` prints when the platform is configured but its SDK is missing.
    extra: str | None = None
    # People can talk with the bot one to one here (and its channel sets ``InboundMessage.direct``): a link
    # code typed anywhere else on the platform, where others could read it, is refused and spent.
    direct_messages: bool = False


def channel_spec(
    name: str,
    title: str,
    settings: type[BaseSettings],
    *,
    threads: str,
    thread_example: str,
    person_example: str,
    enabled: Callable[[Any], bool],
    build: Callable[[Any], ChannelRuntime],
    channels: str | None = None,
    channel_example: str | None = None,
    doctor: Callable[[Any], Awaitable[list[Check]]] | None = None,
    check_settings: Callable[[Any], list[Check]] | None = None,
    secrets: tuple[str, ...] = (),
    local: LocalChat | None = None,
    paths: tuple[str, ...] = (),
    same_origin: bool = False,
    extra: str | None = None,
    direct_messages: bool = False,
) -> ChannelSpec:
    """A spec from its grammar as pattern strings: thread ids and channel references (the thread grammar
    unless ``channels`` is given) ASCII-only, a person ``<name>:`` and up to 128 non-space characters."""
    return ChannelSpec(
        name=name,
        title=title,
        threads=re.compile(threads, re.ASCII),
        channels=re.compile(channels or threads, re.ASCII),
        people=re.compile(rf"{re.escape(name)}:[^\s]{{1,128}}"),
        thread_example=thread_example,
        channel_example=channel_example or thread_example,
        person_example=person_example,
        settings=settings,
        enabled=enabled,
        build=build,
        doctor=doctor,
        check_settings=check_settings,
        secrets=tuple(re.compile(secret) for secret in secrets),
        local=local,
        paths=paths,
        same_origin=same_origin,
        extra=extra,
        direct_messages=direct_messages,
    )


def when_set(field: str) -> Callable[[Any], bool]:
    """A spec's ``enabled``: run the platform once its setting ``field`` (its token, say) is set."""
    return lambda settings: getattr(settings, field) is not None


def lazy_exports(package: str, exports: dict[str, str]) -> Callable[[str], Any]:
    """A platform package's ``__getattr__``: each exported name's module is imported on first use, so
    reading the platform's spec at every start never loads its SDK."""

    def __getattr__(name: str) -> Any:
        if name in exports:
            return getattr(import_module(exports[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__


def lazy_doctor(module: str) -> Callable[[Any], Awaitable[list[Check]]]:
    """A platform's doctor check, the ``check`` of ``module``: imported only when the doctor runs, since
    the module may load the platform's SDK."""

    async def doctor(settings: Any) -> list[Check]:
        check: Callable[[Any], Awaitable[list[Check]]] = import_module(module).check
        return await check(settings)

    return doctor


def specs() -> tuple[ChannelSpec, ...]:
    """Every installed platform's spec, sorted by name (entry points are loaded once)."""
    return tuple(found for found in platforms.installed() if isinstance(found, ChannelSpec))


def spec_for(name: str) -> ChannelSpec | None:
    found = platforms.platform(name)
    return found if isinstance(found, ChannelSpec) else None


def has_direct_messages(platform: str) -> bool:
    """Whether ``platform`` has one-to-one conversations with the bot (False for one not installed)."""
    spec = spec_for(platform)
    return spec is not None and spec.direct_messages


def register(spec: ChannelSpec) -> None:
    """Install a spec that no entry point names (a test's fake platform, an embedding application's own)."""
    platforms.add(spec)


def unregister(name: str) -> None:
    platforms.remove(name)


def platform_settings(spec: ChannelSpec, settings: Settings) -> BaseSettings:
    """The spec's settings from the environment and ``.env``, overridden by same-named keyword arguments
    given to the core ``Settings(...)`` (``Settings(acme_token=…)`` for a platform named acme)."""
    extras = settings.model_extra or {}
    given = {name: value for name, value in extras.items() if name in spec.settings.model_fields}
    return spec.settings(**given)


def settings_checks(spec: ChannelSpec, settings: Settings) -> list[Check]:
    """The spec's offline checks of its own settings (none when it has no such check)."""
    return spec.check_settings(platform_settings(spec, settings)) if spec.check_settings else []


def enabled_specs(settings: Settings) -> list[tuple[ChannelSpec, BaseSettings]]:
    """The specs whose settings say to run them, each with its settings."""
    chosen = ((spec, platform_settings(spec, settings)) for spec in specs())
    return [(spec, own) for spec, own in chosen if spec.enabled(own)]


class MissingSdk(ValueError):
    """A configured platform whose SDK is not installed: ``serve`` stops with this one line."""


def build_channels(settings: Settings) -> list[ChannelRuntime]:
    """The channels whose settings are present. A platform's SDK is imported only when it is configured;
    a configured platform whose SDK is missing is a ``MissingSdk`` naming what to install."""
    return [_build(spec, own) for spec, own in enabled_specs(settings)]


def _build(spec: ChannelSpec, settings: BaseSettings) -> ChannelRuntime:
    try:
        return spec.build(settings)
    except ModuleNotFoundError as missing:
        top = (missing.name or "").partition(".")[0]
        if not top or top in ("gateway", "channels") or top == spec.build.__module__.partition(".")[0]:
            raise  # a module of the gateway or of the plugin itself: a bug, not a missing install
        install = f"pip install 'threadgate[{spec.extra}]'" if spec.extra else f"install the package {top!r}"
        raise MissingSdk(
            f"the {spec.name} channel is configured but its SDK ({top}) is not installed: {install}"
        ) from missing


def route_prefixes(spec: ChannelSpec) -> tuple[str, ...]:
    """Where a platform's HTTP routes may mount: ``/<name>/`` and the public prefixes its spec names."""
    return (f"/{spec.name}/", *spec.paths)


def same_origin_prefixes(names: list[str]) -> tuple[str, ...]:
    """The route prefixes of the named platforms whose specs ask for the same-origin guard on writes."""
    chosen = (spec_for(name) for name in names)
    return tuple(prefix for spec in chosen if spec and spec.same_origin for prefix in route_prefixes(spec))


def route_refusal(spec: ChannelSpec, path: str, core_paths: list[str]) -> str | None:
    """Why ``path`` may not be a route of ``spec``'s channel (None when it may): it must lie under one of
    the platform's prefixes, and no prefix may take the first segment of one of the core's paths."""
    prefixes = route_prefixes(spec)
    core = {_first_segment(taken) for taken in core_paths}
    under = next((prefix for prefix in prefixes if path.startswith(prefix)), None)
    if under is None:
        return (
            f"the {spec.name} channel asks for the route {path}, outside its prefix "
            f"{' or '.join(prefixes)}; a channel's routes mount under /{spec.name}/"
        )
    if _first_segment(under) in core:
        return f"the {spec.name} channel asks for the route {path}, under {under}, which is the gateway's own"
    return None


def _first_segment(path: str) -> str:
    return path.lstrip("/").split("/", 1)[0].split("{", 1)[0]
