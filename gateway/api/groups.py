"""Groups with members and a rotation (contract §11 "On duty"): ``/v1/groups`` for operators.

``group:<name>`` in an approver list or escalation names the group's members (its own ``members`` and every
person whose record lists the group); ``group:<name>:on-duty`` names the person whose shift it is now.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Path
from pydantic import BaseModel, Field

from gateway.api.auth import OperatorCaller
from gateway.api.deps import Core
from gateway.api.errors import error_responses, invalid_param
from gateway.api.people import DirectoryWriter
from gateway.base.errors import GatewayError
from gateway.base.models.groups import Group, GroupBody, group_name

router = APIRouter(prefix="/v1", tags=["people"])

GroupPath = Annotated[
    str, Path(min_length=1, max_length=70, description="The group's name: sre, or group:sre.")
]


class GroupList(BaseModel):
    items: list[Group]
    cursor: str | None = Field(description="Always null: groups are listed whole.")


def _bare(value: str) -> str:
    try:
        return group_name(value)
    except ValueError as exc:
        raise invalid_param("group", "path", str(exc)) from None


def _shown(name: str, group: GroupBody) -> Group:
    on_duty = group.rotation.on_duty(datetime.now(UTC)) if group.rotation is not None else None
    return Group(group=name, members=group.members, rotation=group.rotation, on_duty=on_duty)


def _not_found(name: str) -> GatewayError:
    return GatewayError("GROUP_NOT_FOUND", f"No group {name!r} in the directory.", 404, {"group": name})


@router.get("/groups", response_model=GroupList, responses=error_responses(403))
async def list_groups(core: Core, caller: OperatorCaller) -> GroupList:
    """Every group with members or a rotation, by name, each with who is on duty now."""
    groups = await core.store.people.groups()
    return GroupList(items=[_shown(name, groups[name]) for name in sorted(groups)], cursor=None)


@router.get("/groups/{group}", response_model=Group, responses=error_responses(403, 404))
async def get_group(group: GroupPath, core: Core, caller: OperatorCaller) -> Group:
    """One group: members, rotation and ``on_duty`` (the person whose shift it is now, or null)."""
    bare = _bare(group)
    found = (await core.store.people.groups()).get(bare)
    if found is None:
        raise _not_found(bare)
    return _shown(bare, found)


@router.put("/groups/{group}", response_model=Group, responses=error_responses(400, 403))
async def put_group(group: GroupPath, body: GroupBody, core: Core, caller: DirectoryWriter) -> Group:
    """Create or replace a group whole: ``members`` (person ids) and an optional ``rotation``
    (``starts_at``, ``shift_seconds``, ``order`` of members)."""
    bare = _bare(group)
    await core.store.people.put_group(bare, body)
    return _shown(bare, body)


@router.delete("/groups/{group}", response_model=Group, responses=error_responses(403, 404))
async def delete_group(group: GroupPath, core: Core, caller: DirectoryWriter) -> Group:
    """Remove a group's members list and rotation (people whose records name the group stay in it)."""
    bare = _bare(group)
    found = (await core.store.people.groups()).get(bare)
    if found is None or not await core.store.people.remove_group(bare):
        raise _not_found(bare)
    return _shown(bare, found)
