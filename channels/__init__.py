"""Chat platform adapters. Each turns platform events into InboundMessage and posts thread items back.

Each ``channels/<name>/spec.py`` exports the platform's ``ChannelSpec`` (``gateway.delivery.plugins``), named
by a
``threadgate.channels`` entry point in pyproject.toml.
"""
