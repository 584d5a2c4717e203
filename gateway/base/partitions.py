"""How the global indexes and feeds are split: a fixed number of partitions, chosen by the thread's hash.

Each partition's keys share one hash tag, so on Redis Cluster they spread over the masters as the threads
do. The tags are chosen one per equal slice of the 16,384 slots (a test checks each): any number of
masters up to PARTITIONS, each owning a contiguous share of the slots, gets its share of the partitions.
Changing PARTITIONS or a tag moves keys: both are fixed for good.
"""

from __future__ import annotations

import zlib

PARTITIONS = 12
PARTITION_TAGS = (
    "tgp0.216",
    "tgp1.3160",
    "tgp2.289",
    "tgp3.1562",
    "tgp4.185",
    "tgp5.42",
    "tgp6.88",
    "tgp7.761",
    "tgp8.734",
    "tgp9.44",
    "tgp10.264",
    "tgp11.1027",
)
# The one-key indexes and feeds of earlier versions, read as one more partition (index LEGACY) and never
# written: their entries are moved into the partitions by adoption (the sorted sets) or age out (the feeds).
LEGACY = PARTITIONS
EVERY_PARTITION = range(PARTITIONS + 1)  # every partition a reader merges, the legacy keys last


def partition(thread_id: str) -> int:
    """The partition of a thread's entries in the global indexes and feeds (stable: CRC-32 of its id)."""
    return zlib.crc32(thread_id.encode()) % PARTITIONS
