"""The installed chat platforms: the ``threadgate.channels`` entry points, loaded once, by name.

Identifiers, claims and log redaction read each platform's grammar from here. This module imports nothing
of the project, so the lowest modules (``gateway.base.ids``, ``gateway.base.logs``) may use it; the typed
``ChannelSpec`` these objects are lives in ``gateway.delivery.plugins``.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable
from importlib.metadata import entry_points
from typing import Protocol, runtime_checkable

GROUP = "threadgate.channels"
NAME = re.compile(r"[a-z][a-z0-9_-]{0,31}", re.ASCII)
_LOGGER = logging.getLogger("threadgate")


@runtime_checkable
class Platform(Protocol):
    """What the core's identifiers need of a platform (``gateway.delivery.plugins.ChannelSpec`` has all of
    it)."""

    @property
    def name(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def threads(self) -> re.Pattern[str]: ...
    @property
    def channels(self) -> re.Pattern[str]: ...
    @property
    def people(self) -> re.Pattern[str]: ...
    @property
    def thread_example(self) -> str: ...
    @property
    def channel_example(self) -> str: ...
    @property
    def person_example(self) -> str: ...
    @property
    def secrets(self) -> tuple[re.Pattern[str], ...]: ...


_lock = threading.RLock()
_loading = threading.local()  # set while this thread loads: a log line written meanwhile sees no platform
_installed: dict[str, Platform] | None = None
_added: dict[str, Platform] = {}


def _problem(value: object) -> str | None:
    """Why an entry point's object is not a platform, or None when it is one."""
    if not isinstance(value, Platform):
        return "not a ChannelSpec"
    if not NAME.fullmatch(value.name):
        return f"name {value.name!r} is not lower-case letters, digits, _ or - (a letter first)"
    patterns = (value.threads, value.channels, value.people, *value.secrets)
    if not all(isinstance(pattern, re.Pattern) for pattern in patterns):
        return "threads, channels, people and secrets must be compiled patterns"
    return None


def _load() -> dict[str, Platform]:
    """Every entry point of the group that loads and is a platform; a broken one is logged, not fatal."""
    found: dict[str, Platform] = {}
    broken: list[tuple[str, str]] = []
    for point in entry_points(group=GROUP):
        try:
            value = point.load()
        except Exception as exc:
            broken.append((point.name, f"{type(exc).__name__}: {exc}"))
            continue
        problem = _problem(value)
        if problem is not None:
            broken.append((point.name, problem))
        elif value.name in found:
            broken.append((point.name, f"{value.name!r} is installed twice"))
        else:
            found[value.name] = value
    global _installed
    _installed = found  # set before logging: the log formatter's redaction reads it back
    for name, reason in broken:
        fields = {"entry_point": name, "group": GROUP, "reason": reason}
        _LOGGER.warning("plugins.skipped", extra={"fields": fields})
    return found


def installed() -> tuple[Platform, ...]:
    """Every platform, sorted by name: the entry points, then any added at run time."""
    loaded = _installed
    if loaded is None and getattr(_loading, "active", False):
        loaded = {}
    elif loaded is None:
        with _lock:
            _loading.active = True
            try:
                loaded = _installed if _installed is not None else _load()
            finally:
                _loading.active = False
    merged = {**loaded, **_added}
    return tuple(merged[name] for name in sorted(merged))


def platform(name: str) -> Platform | None:
    """The platform whose thread ids, channel references and identities start with ``name:``."""
    added = _added.get(name)
    if added is not None:
        return added
    loaded = _installed
    if loaded is None:  # not loaded yet (or loading): the slow path loads them
        return next((found for found in installed() if found.name == name), None)
    return loaded.get(name)  # every id parsed looks its platform up: by name, not a merged, sorted copy


def add(spec: Platform) -> None:
    """Install a platform that no entry point names (a test's fake, an embedding application's own)."""
    problem = _problem(spec)
    if problem is not None:
        raise ValueError(f"not a platform: {problem}")
    _added[spec.name] = spec


def remove(name: str) -> None:
    """Forget a platform added with ``add`` (entry points stay)."""
    _added.pop(name, None)


def prefix(value: str) -> str:
    """The platform part of ``<platform>:<rest>`` (empty without a colon)."""
    head, colon, _ = value.partition(":")
    return head if colon else ""


def either(examples: Iterable[str]) -> str:
    """``a, b or c``: the forms that work, for a sentence that says what to use instead."""
    items = list(examples)
    if not items:
        return "an installed platform's form (none is installed)"
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"
