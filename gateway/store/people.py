"""The directory of people in Redis: records, identities and the identity index, link codes.

Every key shares the hash tag ``{people}`` (one Cluster slot), so each script checks and changes the
identity index in one atomic step: two concurrent links of one identity cannot both win.
"""

from __future__ import annotations

import builtins
import json
import time
from collections.abc import Iterable
from datetime import datetime
from enum import StrEnum
from typing import Any

from gateway.base.models import GROUP_PREFIX, PERSON_PREFIX, STORED, Person
from gateway.base.models.groups import ON_DUTY, GroupBody, on_duty_group
from gateway.store import calls, keys
from gateway.store.lru import LRU
from gateway.store.scripts import ScriptCall, Scripts

WHOIS_CACHE_S = 2.0  # how long a process reuses an identity's person before reading it again
WHOIS_KEPT = 4096


class LinkStatus(StrEnum):
    """What linking an identity did."""

    OK = "ok"
    MISSING = "missing"  # no such person
    TAKEN = "taken"  # the identity belongs to another person
    NOT_LINKED = "not_linked"  # unlink: the identity is not that person's
    UNKNOWN = "unknown"  # a link code never issued, or expired
    USED = "used"  # a link code already spent
    LIMITED = "limited"  # too many link codes asked for
    EXPOSED = "exposed"  # a link code typed where others could read it: spent, linking nothing


class PeopleStore:
    """People, their identities and groups, and one-time link codes (held by the store as ``people``)."""

    def __init__(self, client: Any, scripts: Scripts) -> None:
        self.redis = client
        self.scripts = scripts
        self._whois: LRU[tuple[float, Person | None]] = LRU(WHOIS_KEPT)
        self._groups: tuple[float, dict[str, GroupBody]] | None = None

    def forget(self) -> None:
        """Drop what this process remembers of who is who (after a change it made itself)."""
        self._whois.clear()
        self._groups = None

    async def _script(self, call: ScriptCall) -> Any:
        return await self.scripts.call(self.redis, *call)

    async def put(self, person: Person) -> tuple[bool, tuple[str, str] | None]:
        """Create or replace ``person`` whole: (created, None), or (False, (identity, its person)) when
        one of its identities belongs to somebody else (nothing changed)."""
        record = json.dumps({"name": person.name, "email": person.email, "groups": person.groups})
        reply = await self._script(calls.put_person(person.person, record, person.identities))
        self.forget()
        if reply[0] == "taken":
            return False, (str(reply[1]), str(reply[2]))
        return bool(int(reply[1])), None

    async def remove(self, person: str) -> bool:
        removed = bool(await self._script(calls.remove_person(person)))
        self.forget()
        return removed

    async def link(self, person: str, identity: str, *, unlink: bool = False) -> tuple[LinkStatus, str]:
        """Link (or unlink) ``identity`` to ``person``: the status, and for TAKEN the identity's person."""
        reply = await self._script(calls.link_identity(person, identity, unlink=unlink))
        self.forget()
        return LinkStatus(reply[0]), str(reply[1]) if len(reply) > 1 else ""

    async def get(self, person: str) -> Person | None:
        pipe = self.redis.pipeline(transaction=False)
        pipe.get(keys.person(person))
        pipe.smembers(keys.person_identities(person))
        raw, identities = await pipe.execute()
        if raw is None:
            return None
        return _person(person, raw, identities)

    async def list(self) -> list[Person]:
        """Everyone, by id."""
        ids = sorted(await self.redis.smembers(keys.PEOPLE_ALL))
        if not ids:
            return []
        pipe = self.redis.pipeline(transaction=False)
        for person in ids:
            pipe.get(keys.person(person))
            pipe.smembers(keys.person_identities(person))
        replies = await pipe.execute()
        found = []
        for index, person in enumerate(ids):
            raw, identities = replies[2 * index], replies[2 * index + 1]
            if raw is not None:
                found.append(_person(person, raw, identities))
        return found

    async def whois(self, identity: str) -> Person | None:
        """The person an identity belongs to (None: nobody's), remembered for ``WHOIS_CACHE_S``."""
        now = time.monotonic()
        cached = self._whois.get(identity)
        if cached is not None and cached[0] > now:
            return cached[1]
        if identity.startswith(PERSON_PREFIX):  # a signed-in person answers as person:<id>
            owner: str | None = identity[len(PERSON_PREFIX) :]
        else:
            owner = await self.redis.hget(keys.PEOPLE_INDEX, identity)
        found = await self.get(owner) if owner else None
        self._whois.put(identity, (now + WHOIS_CACHE_S, found))
        return found

    async def by_email(self, email: str) -> Person | None:
        """The person whose email is ``email`` (compared without case), if any: the directory is small,
        and sign-in asks once per login."""
        wanted = email.strip().lower()
        for person in await self.list():
            if person.email and person.email.strip().lower() == wanted:
                return person
        return None

    async def new_code(
        self, person: str, code: str, ttl_ms: int, most: int, window_ms: int
    ) -> tuple[LinkStatus, int]:
        """Keep a one-time link ``code`` for ``person``: OK, MISSING, or LIMITED with the ms to wait."""
        reply = await self._script(calls.new_link_code(person, code, ttl_ms, most, window_ms))
        return LinkStatus(reply[0]), int(reply[1]) if len(reply) > 1 else 0

    async def use_code(self, code: str, identity: str, *, exposed: bool = False) -> tuple[LinkStatus, str]:
        """Spend ``code`` from ``identity``: the status, and the person (OK) or the identity's (TAKEN).
        An ``exposed`` code (typed where others could read it) is spent without linking: EXPOSED."""
        reply = await self._script(calls.use_link_code(code, identity, exposed))
        self.forget()
        return LinkStatus(reply[0]), str(reply[1]) if len(reply) > 1 else ""

    # Groups with members and rotations (contract §11): few, read whole and remembered briefly.

    async def put_group(self, name: str, group: GroupBody) -> bool:
        """Create or replace group ``name`` whole; True when it is new."""
        created = bool(await self.redis.hset(keys.PEOPLE_GROUPS, name, group.model_dump_json()))
        self.forget()
        return created

    async def remove_group(self, name: str) -> bool:
        removed = bool(await self.redis.hdel(keys.PEOPLE_GROUPS, name))
        self.forget()
        return removed

    async def groups(self) -> dict[str, GroupBody]:
        """Every group by name, remembered for ``WHOIS_CACHE_S`` (as who is who is)."""
        now = time.monotonic()
        if self._groups is not None and self._groups[0] > now:
            return self._groups[1]
        raw = await self.redis.hgetall(keys.PEOPLE_GROUPS)
        found = {
            _text(name): GroupBody.model_validate_json(value, context=STORED) for name, value in raw.items()
        }
        self._groups = (now + WHOIS_CACHE_S, found)
        return found

    async def memberships(self, person: Person, at: datetime) -> builtins.list[str]:
        """The approver-list entries ``person`` stands for: ``person:<id>``, ``group:<name>`` for each
        group they are in (their record's, or a group naming them as a member) and
        ``group:<name>:on-duty`` for each group whose shift is theirs at ``at``."""
        names = [f"{PERSON_PREFIX}{person.person}", *(f"{GROUP_PREFIX}{group}" for group in person.groups)]
        for name, group in (await self.groups()).items():
            if person.person in group.members:
                names.append(f"{GROUP_PREFIX}{name}")
            if group.rotation is not None and group.rotation.on_duty(at) == person.person:
                names.append(f"{GROUP_PREFIX}{name}{ON_DUTY}")
        return list(dict.fromkeys(names))

    async def named(self, names: Iterable[str], at: datetime) -> builtins.list[Person]:
        """The people ``names`` stand for at ``at``, in order, each once: ``person:<id>`` (their record;
        one nobody put in the directory, such as a signed-in person known by their provider only, as a
        bare id), ``group:<name>`` (its members) and ``group:<name>:on-duty`` (whose shift it is). Other
        entries (platform identities) are not people's names and are left out."""
        found: dict[str, Person] = {}
        for name in names:
            if name.startswith(PERSON_PREFIX):
                bare = name.removeprefix(PERSON_PREFIX)
                batch = [await self.get(bare) or Person(person=bare)]
            elif name.startswith(GROUP_PREFIX):
                batch = await self.members(name, at)
            else:
                continue
            for person in batch:
                found.setdefault(person.person, person)
        return builtins.list(found.values())

    async def members(self, name: str, at: datetime) -> builtins.list[Person]:
        """The people ``group:<name>`` (or ``group:<name>:on-duty``) names at ``at``: a directory
        group's members (theirs by record or by the group's list), or the person on duty."""
        groups = await self.groups()
        duty = on_duty_group(name)
        if duty is not None:
            found = groups.get(duty)
            on_duty = found.rotation.on_duty(at) if found is not None and found.rotation else None
            person = await self.get(on_duty) if on_duty else None
            return [person] if person is not None else []
        bare = name.removeprefix(GROUP_PREFIX)
        listed = set(groups[bare].members) if bare in groups else set()
        return [person for person in await self.list() if bare in person.groups or person.person in listed]


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _person(person: str, raw: str, identities: Any) -> Person:
    data = json.loads(raw)
    return Person(
        person=person,
        name=data.get("name"),
        email=data.get("email"),
        identities=sorted(identities),
        groups=list(data.get("groups") or []),
    )
