"""Which tenant (Microsoft Entra directory) an activity comes from, and whether a single-tenant bot takes it.

Teams names the sender's tenant twice: ``channelData.tenant.id`` and ``conversation.tenantId``. With
``TEAMS_TENANT_ID`` set, an activity is taken only when it names that tenant and no other; one naming none
cannot be shown to be the bot's own and is refused too. Pure.
"""

from __future__ import annotations

import re
from typing import Any

from gateway.sdk import Check

TENANT_ID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
TENANT_EXAMPLE = "72f988bf-86f1-41af-91ab-2d7cd011db47"
# Told to a person who pressed a control from another tenant (a message from there is dropped silently).
FOREIGN_TENANT = "This bot answers only its own organization, so nothing was changed."


def tenants_of(activity: Any) -> frozenset[str]:
    """The tenant ids the activity names (lower case; GUIDs compare case-insensitively)."""
    channel_data = getattr(activity, "channel_data", None)
    tenant = getattr(channel_data, "tenant", None)
    conversation = getattr(activity, "conversation", None)
    named = (getattr(tenant, "id", None), getattr(conversation, "tenant_id", None))
    return frozenset(value.strip().lower() for value in named if isinstance(value, str) and value.strip())


def from_tenant(tenant_id: str | None, activity: Any) -> bool:
    """Whether the bot takes the activity: any when it is multi-tenant (``tenant_id`` None), else only one
    naming ``tenant_id`` and nothing else."""
    return tenant_id is None or tenants_of(activity) == {tenant_id.strip().lower()}


def check_settings(settings: Any) -> list[Check]:
    """Activities carry the tenant's id, so a tenant named by its domain could match none of them."""
    tenant = settings.teams_tenant_id
    if tenant is not None and not TENANT_ID.fullmatch(tenant):
        return [
            Check.warn(
                "teams",
                f"TEAMS_TENANT_ID is {tenant!r}, not a tenant id: activities name their tenant by id, so "
                f"every one will be refused; use the directory (tenant) id, such as {TENANT_EXAMPLE}",
            )
        ]
    return []
