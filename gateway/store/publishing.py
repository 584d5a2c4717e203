"""What one publish sends each partition: its feed entries and the settled prompts its indexes drop, as
one ``publish_feed.lua`` call (a partition's keys share a slot). On one Redis server, where a script may
touch keys of any slot, the whole publish is one call."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gateway.store import keys
from gateway.store.results import FeedEntry
from gateway.store.scripts import ScriptCall


def slot_group(key: str) -> str:
    """The hash tag a key is placed by (the whole key where it has none)."""
    start = key.find("{")
    end = key.find("}", start + 1)
    return key[start + 1 : end] if start >= 0 and end > start + 1 else key


@dataclass(slots=True)
class PartitionPublish:
    """One partition's share of a publish: entries by stream, members to drop by index."""

    entries: dict[str, list[FeedEntry]] = field(default_factory=dict)
    drops: dict[str, list[str]] = field(default_factory=dict)

    def call(self, caps: Callable[[str], int], dedupe_s: int) -> ScriptCall:
        """The ``publish_feed`` call (its KEYS and ARGV are laid out here); ``caps`` gives a stream's
        length cap (its age is the sweeper's to trim)."""
        streams = list(self.entries)
        markers = [keys.feed_seen(stream, one.event_id) for stream in streams for one in self.entries[stream]]
        args: list[Any] = [len(streams), dedupe_s]
        for stream in streams:
            args += [caps(stream), len(self.entries[stream])]
        args += [one.json for stream in streams for one in self.entries[stream]]
        for members in self.drops.values():
            args += [len(members), *members]
        return ScriptCall("publish_feed", [*streams, *markers, *self.drops], args)


def plan(
    entries: list[FeedEntry], drops: list[tuple[Any, ...]], *, by_slot: bool = True
) -> list[PartitionPublish]:
    """Entries and ``("ZREM", key, *members)`` drops grouped by the partition (slot) of their keys; with
    ``by_slot`` off (one Redis server, where a script may touch any key), all in one group."""
    groups: dict[str, PartitionPublish] = {}

    def group(key: str) -> PartitionPublish:
        return groups.setdefault(slot_group(key) if by_slot else "", PartitionPublish())

    for one in entries:
        group(one.stream).entries.setdefault(one.stream, []).append(one)
    for _, key, *members in drops:
        group(key).drops.setdefault(key, []).extend(str(member) for member in members)
    return list(groups.values())
