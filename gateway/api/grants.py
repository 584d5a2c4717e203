"""A run's grants ("approve for this session"): listed and revoked by the run's agent and by operators."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query
from fastapi.responses import JSONResponse

from gateway.api.answering import SessionGroups
from gateway.api.auth import PERSON, Caller
from gateway.api.deps import Core
from gateway.api.errors import error_responses
from gateway.api.runs import RunId
from gateway.api.schemas import GrantList
from gateway.api.scope import own_run
from gateway.base.errors import GatewayError
from gateway.base.models import check_identity
from gateway.decision.granting import revoke_grant
from gateway.rules.authz import may_decide
from gateway.rules.grants import Grant

router = APIRouter(prefix="/v1", tags=["grants"])

GrantId = Annotated[str, Path(min_length=1, max_length=100)]
Person = Annotated[
    str | None,
    Query(
        alias="from",
        min_length=3,
        max_length=160,
        description="The person revoking (an inbox answers as one): they must be allowed to answer the "
        "run's prompts (its starter or the agent's approvers).",
    ),
]


@router.get("/runs/{run_id}/grants", response_model=GrantList, responses=error_responses(404))
async def list_grants(run_id: RunId, core: Core, caller: Caller) -> JSONResponse:
    """The run's grants in force, oldest first, each with how often it let a call through (``uses``).

    A run that ended has none. 404 RUN_NOT_FOUND for a run the token does not act for."""
    run = await own_run(core.store, caller, run_id)
    grants = await core.store.grants.in_force(run.thread_id, run.run_id)
    return JSONResponse({"items": [grant.model_dump(mode="json") for grant in grants], "cursor": None})


@router.delete(
    "/runs/{run_id}/grants/{grant_id}", response_model=Grant, responses=error_responses(400, 403, 404)
)
async def delete_grant(
    run_id: RunId,
    grant_id: GrantId,
    core: Core,
    caller: Caller,
    groups: SessionGroups,
    from_: Person = None,
) -> JSONResponse:
    """Revoke a grant: later calls it matched are asked about again. Answers the grant as it was.

    The run's own agent token or an operator token may revoke; ``from`` names the person doing it, who
    must be allowed to answer the run's prompts (403 FORBIDDEN otherwise). A signed-in person's session
    revokes as that person, on the same condition (its identity provider's groups claim counting). 404
    RUN_NOT_FOUND for a run the token does not act for, 404 GRANT_NOT_FOUND for a grant the run does not
    have (or no longer has).
    """
    run = await own_run(core.store, caller, run_id)
    by = caller.name
    if from_ is not None and caller.role != PERSON:
        try:
            by = check_identity(from_)
        except ValueError as exc:
            raise GatewayError(
                "INVALID_PARAMS", f"Parameter 'from' is invalid: {exc}.", 422, {"field": "from"}
            ) from exc
    # A person named, or a session's own person (whatever it named), must be allowed to answer the run.
    named = from_ is not None or caller.role == PERSON
    if named and not await may_decide(core.store, run.agent, run.started_by, by, groups):
        raise GatewayError(
            "FORBIDDEN",
            f"{by} may not revoke this run's grants: only the run's starter and the agent's approvers can.",
            403,
            {"run_id": run_id},
        )
    grant = await revoke_grant(core.store, run, grant_id, by)
    return JSONResponse(grant.model_dump(mode="json"))
