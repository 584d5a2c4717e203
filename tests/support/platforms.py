"""A platform's channel and settings from the core ``Settings``, the way ``threadgate serve`` reads them."""

from __future__ import annotations

from typing import Any

from gateway.base.settings import Settings
from gateway.delivery.plugins import ChannelSpec, platform_settings, spec_for


def spec(name: str) -> ChannelSpec:
    found = spec_for(name)
    assert found is not None, f"the {name} platform is not installed (pip install -e .)"
    return found


def own_settings(name: str, settings: Settings) -> Any:
    """The platform's own settings, overridden by what ``settings`` was given."""
    return platform_settings(spec(name), settings)


def build_channel(name: str, settings: Settings) -> Any:
    """The platform's channel, built by its spec from ``settings``."""
    return spec(name).build(own_settings(name, settings))
