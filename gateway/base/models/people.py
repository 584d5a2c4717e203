"""People (contract §10): one person behind many chat identities, in groups, named in approver lists."""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from gateway.base.models.base import Model, check_identity

PERSON_ID = re.compile(r"[a-z0-9._-]{1,64}", re.ASCII)
GROUP_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}", re.ASCII)
PERSON_PREFIX, GROUP_PREFIX = "person:", "group:"
MAX_IDENTITIES = 50
MAX_GROUPS = 50


def person_id(value: str) -> str:
    """The bare id of ``alice`` or ``person:alice``; ValueError when it is neither."""
    bare = value[len(PERSON_PREFIX) :] if value.startswith(PERSON_PREFIX) else value
    if not PERSON_ID.fullmatch(bare):
        raise ValueError("must be a person id: 1 to 64 of a-z, 0-9, '.', '_' and '-' (or person:<id>)")
    return bare


def names_people(value: str) -> bool:
    """Whether an approver or escalation target names people (``person:<id>``, ``group:<name>``) rather
    than a platform's identity, thread or channel."""
    return value.startswith((PERSON_PREFIX, GROUP_PREFIX))


def check_approver(value: str) -> str:
    """An approver list's entry: a platform identity, ``person:<id>``, ``group:<name>`` or
    ``group:<name>:on-duty`` (the person whose shift it is now)."""
    if value.startswith(PERSON_PREFIX):
        return PERSON_PREFIX + person_id(value)
    if value.startswith(GROUP_PREFIX):
        name = value[len(GROUP_PREFIX) :].removesuffix(":on-duty")
        if not GROUP_NAME.fullmatch(name):
            raise ValueError(
                "a group is group:<name> (or group:<name>:on-duty), the name 1 to 64 of A-Z, a-z, 0-9, "
                "'.', '_', '-'"
            )
        return value
    return check_identity(value)


class PersonBody(Model):
    """What ``PUT /v1/people/{person}`` takes: the whole record (identities and groups replaced)."""

    person: str | None = Field(default=None, description="Optional; when given, the path's person.")
    name: str | None = Field(default=None, max_length=200)
    email: str | None = Field(default=None, max_length=254)
    identities: list[str] = Field(default_factory=list, max_length=MAX_IDENTITIES)
    groups: list[str] = Field(default_factory=list, max_length=MAX_GROUPS)

    @field_validator("identities")
    @classmethod
    def _identities(cls, values: list[str]) -> list[str]:
        return list(dict.fromkeys(check_identity(value) for value in values))

    @field_validator("groups")
    @classmethod
    def _groups(cls, values: list[str]) -> list[str]:
        for value in values:
            if not GROUP_NAME.fullmatch(value):
                raise ValueError("a group name is 1 to 64 of A-Z, a-z, 0-9, '.', '_' and '-'")
        return list(dict.fromkeys(values))


class Person(Model):
    """A person of the directory: ``person`` is the bare id (``alice``; ``person:alice`` names it)."""

    person: str
    name: str | None = None
    email: str | None = None
    identities: list[str] = Field(default_factory=list)
    groups: list[str] = Field(default_factory=list)
