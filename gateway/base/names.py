"""Display names of the people a channel has heard from, to name who answered (else their identity)."""

from __future__ import annotations

from collections import OrderedDict

REMEMBERED = 10_000


class Names:
    """The last display name heard for each of the ``size`` people heard from most recently.

    Kept per process: a process that never heard from someone shows their identity instead.
    """

    def __init__(self, size: int = REMEMBERED) -> None:
        self.size = size
        self._names: OrderedDict[str, str] = OrderedDict()

    def learn(self, identity: str, name: str | None) -> None:
        """Remember ``identity``'s display name; a blank one is not a name."""
        if name is None or not name.strip():
            return
        self._names[identity] = name.strip()
        self._names.move_to_end(identity)
        while len(self._names) > self.size:
            self._names.popitem(last=False)

    def shown(self, identity: str) -> str:
        """How ``identity`` is shown: its display name when heard, else the identity itself."""
        return self._names.get(identity, identity)
