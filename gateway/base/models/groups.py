"""Groups with members and an optional rotation (contract §11 "On duty"): ``group:<name>:on-duty`` names
the person whose shift it is now."""

from __future__ import annotations

from datetime import datetime
from typing import Self

from pydantic import AwareDatetime, Field, field_validator, model_validator

from gateway.base.models.base import Model
from gateway.base.models.people import GROUP_NAME, GROUP_PREFIX, person_id

ON_DUTY = ":on-duty"
MAX_MEMBERS = 500
MIN_SHIFT_SECONDS = 60
MAX_SHIFT_SECONDS = 366 * 86_400


def _people(values: list[str]) -> list[str]:
    return list(dict.fromkeys(person_id(value) for value in values))


class Rotation(Model):
    """Shifts of ``shift_seconds`` from ``starts_at``, handed to ``order``'s people in turn, round and
    round; before ``starts_at`` nobody is on duty."""

    starts_at: AwareDatetime
    shift_seconds: int = Field(ge=MIN_SHIFT_SECONDS, le=MAX_SHIFT_SECONDS, strict=True)
    order: list[str] = Field(min_length=1, max_length=MAX_MEMBERS)

    @field_validator("order")
    @classmethod
    def _order(cls, values: list[str]) -> list[str]:
        return _people(values)

    def on_duty(self, at: datetime) -> str | None:
        """The person whose shift holds ``at`` (bare id), or None before the rotation starts."""
        elapsed = (at - self.starts_at).total_seconds()
        if elapsed < 0:
            return None
        return self.order[int(elapsed // self.shift_seconds) % len(self.order)]


class GroupBody(Model):
    """What ``PUT /v1/groups/{group}`` takes: the whole group (members and rotation replaced)."""

    members: list[str] = Field(default_factory=list, max_length=MAX_MEMBERS)
    rotation: Rotation | None = None

    @field_validator("members")
    @classmethod
    def _members(cls, values: list[str]) -> list[str]:
        return _people(values)

    @model_validator(mode="after")
    def _rotation_within(self) -> Self:
        if self.rotation is not None and not set(self.rotation.order) <= set(self.members):
            raise ValueError("rotation.order names only the group's members")
        return self


class Group(GroupBody):
    """A group of the directory; ``on_duty`` (in answers) is the person whose shift it is now."""

    group: str
    on_duty: str | None = None


def group_name(value: str) -> str:
    """The bare name of ``sre`` or ``group:sre``; ValueError when it is neither."""
    bare = value.removeprefix(GROUP_PREFIX)
    if not GROUP_NAME.fullmatch(bare):
        raise ValueError("a group name is 1 to 64 of A-Z, a-z, 0-9, '.', '_' and '-' (or group:<name>)")
    return bare


def on_duty_group(value: str) -> str | None:
    """The group ``group:<name>:on-duty`` names (bare), or None for any other entry."""
    if value.startswith(GROUP_PREFIX) and value.endswith(ON_DUTY):
        return group_name(value[len(GROUP_PREFIX) : -len(ON_DUTY)])
    return None
