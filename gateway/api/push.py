"""A signed-in person's Web Push subscriptions (contract §11): ``/v1/me/push``.

``GET`` says whether Web Push is on and gives the VAPID public key a browser subscribes with; ``POST``
keeps the browser's ``PushSubscription.toJSON()``; ``DELETE`` drops one (by ``endpoint``) or all.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import AnyHttpUrl, BaseModel, Field, field_validator

from gateway.api.deps import Core, runtime_of
from gateway.api.errors import error_responses
from gateway.api.people import CurrentPerson
from gateway.base import vapid
from gateway.base.errors import GatewayError
from gateway.delivery.push import endpoint_problem, push_hosts

router = APIRouter(prefix="/v1", tags=["people"])

KEY = Annotated[str, Field(min_length=16, max_length=200, pattern=r"^[A-Za-z0-9_-]+={0,2}$")]


class PushKeys(BaseModel):
    p256dh: KEY
    auth: KEY


class PushSubscriptionBody(BaseModel):
    """A browser's ``PushSubscription.toJSON()``."""

    endpoint: AnyHttpUrl
    expirationTime: float | None = None
    keys: PushKeys

    @field_validator("endpoint")
    @classmethod
    def _short(cls, value: AnyHttpUrl) -> AnyHttpUrl:
        if len(str(value)) > 2000:
            raise ValueError("at most 2,000 characters")
        return value


class Unsubscribe(BaseModel):
    endpoint: str | None = Field(
        default=None, max_length=2000, description="One browser's; all when left out."
    )


class PushState(BaseModel):
    enabled: bool = Field(description="Whether this gateway sends Web Push (VAPID keys are set).")
    public_key: str | None = Field(description="The VAPID public key (applicationServerKey).")
    subscriptions: int


def _public_key(request: Request) -> str | None:
    key = runtime_of(request).settings.threadgate_vapid_private_key
    return vapid.public_of(key.get_secret_value()) if key is not None else None


@router.get("/me/push", response_model=PushState, responses=error_responses(401))
async def push_state(request: Request, core: Core, person: CurrentPerson) -> PushState:
    """Whether Web Push is on, its public key, and how many browsers of yours are subscribed."""
    public = _public_key(request)
    return PushState(
        enabled=public is not None, public_key=public, subscriptions=len(await core.store.push.of(person))
    )


@router.post("/me/push", status_code=201, response_model=PushState, responses=error_responses(400, 401, 409))
async def subscribe(
    request: Request, body: PushSubscriptionBody, core: Core, person: CurrentPerson
) -> JSONResponse:
    """Keep this browser's subscription: each prompt you may answer, and each escalation to you, becomes a
    notification (at most ten browsers per person; the oldest is dropped beyond)."""
    public = _public_key(request)
    if public is None:
        raise GatewayError(
            "PUSH_NOT_CONFIGURED", "Web Push is off on this gateway (no THREADGATE_VAPID_PRIVATE_KEY).", 409
        )
    subscription = body.model_dump(mode="json")
    if (
        problem := endpoint_problem(subscription["endpoint"], push_hosts(runtime_of(request).settings))
    ) is not None:
        raise GatewayError(
            "VALIDATION_FAILED",
            f"endpoint: {problem}.",
            400,
            {"errors": [{"field": "endpoint", "problem": problem}]},
        )
    created = await core.store.push.add(person, subscription)
    count = len(await core.store.push.of(person))
    state = PushState(enabled=True, public_key=public, subscriptions=count)
    return JSONResponse(state.model_dump(), status_code=201 if created else 200)


@router.delete("/me/push", response_model=PushState, responses=error_responses(400, 401))
async def unsubscribe(
    request: Request, core: Core, person: CurrentPerson, body: Unsubscribe | None = None
) -> PushState:
    """Stop notifying one browser (``endpoint``) or every browser of yours."""
    await core.store.push.remove(person, body.endpoint if body is not None else None)
    public = _public_key(request)
    count = len(await core.store.push.of(person))
    return PushState(enabled=public is not None, public_key=public, subscriptions=count)
