"""The one exception that asks Slack for the event again."""

from __future__ import annotations


class Redeliver(Exception):
    """An event that was read but not taken, for a reason that may pass (the store is away, the channel
    is starting, Slack's own API did not answer): Slack is answered 500 (in Socket Mode the envelope is
    left unacknowledged) and delivers it again."""
