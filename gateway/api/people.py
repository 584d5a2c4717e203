"""The directory of people (contract §10): ``/v1/people`` for operators, ``/v1/me/links`` for a person.

Reading it needs an operator token; changing it needs one acting for every agent, since a person's
identities and groups decide who may answer any agent's prompts.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from gateway.api.auth import OperatorCaller, Principal
from gateway.api.deps import Core
from gateway.api.errors import error_responses, invalid_param
from gateway.base.errors import GatewayError
from gateway.base.models import Person, PersonBody, person_id
from gateway.people.linking import CODE_TTL_MS, new_link_code

router = APIRouter(prefix="/v1", tags=["people"])

PersonPath = Annotated[
    str, Path(min_length=1, max_length=71, description="The person's id: alice, or person:alice.")
]


class PersonList(BaseModel):
    items: list[Person]
    cursor: str | None = Field(description="Always null: the directory is listed whole.")


class LinkCode(BaseModel):
    """A one-time code: typed as ``link <code>`` from a chat identity, it links that identity."""

    person: str
    code: str
    expires_at: str
    expires_in_seconds: int


def _bare(value: str) -> str:
    """The path's person as its bare id, or 422 INVALID_PARAMS naming it."""
    try:
        return person_id(value)
    except ValueError as exc:
        raise invalid_param("person", "path", str(exc)) from None


def _not_found(person: str) -> GatewayError:
    message = f"No person {person!r} in the directory."
    return GatewayError("PERSON_NOT_FOUND", message, 404, {"person": person})


async def directory_writer(caller: OperatorCaller) -> Principal:
    """Changing the directory needs an operator token acting for every agent."""
    if caller.agents is not None:
        raise GatewayError(
            "FORBIDDEN",
            "Changing the directory needs an operator token acting for every agent: a person's identities "
            "and groups decide who may answer any agent's prompts.",
            403,
            {"role": caller.role},
        )
    return caller


DirectoryWriter = Annotated[Principal, Depends(directory_writer)]


@router.get("/people", response_model=PersonList, responses=error_responses(403))
async def list_people(core: Core, caller: OperatorCaller) -> JSONResponse:
    """Everyone in the directory, by id."""
    people = await core.store.people.list()
    return JSONResponse({"items": [person.model_dump(mode="json") for person in people], "cursor": None})


@router.get("/people/{person}", response_model=Person, responses=error_responses(403, 404))
async def get_person(person: PersonPath, core: Core, caller: OperatorCaller) -> Person:
    """One person: name, email, linked identities and groups; 404 PERSON_NOT_FOUND."""
    bare = _bare(person)
    found = await core.store.people.get(bare)
    if found is None:
        raise _not_found(bare)
    return found


@router.put("/people/{person}", response_model=Person, responses=error_responses(400, 403, 409))
async def put_person(person: PersonPath, body: PersonBody, core: Core, caller: DirectoryWriter) -> Person:
    """Create or replace a person whole (identities and groups as given). An identity belongs to one
    person: one of another's is 409 IDENTITY_TAKEN, naming the identity and its person."""
    bare = _bare(person)
    if body.person is not None and _bare(body.person) != bare:
        raise GatewayError(
            "VALIDATION_FAILED",
            f"The body names person {body.person!r} but the path {bare!r}; leave it out or make them agree.",
            400,
            {"errors": [{"field": "person", "problem": "differs from the path"}]},
        )
    record = Person(
        person=bare, name=body.name, email=body.email, identities=body.identities, groups=body.groups
    )
    _, taken = await core.store.people.put(record)
    if taken is not None:
        raise identity_taken(*taken)
    return record.model_copy(update={"identities": sorted(record.identities)})


def identity_taken(identity: str, owner: str) -> GatewayError:
    return GatewayError(
        "IDENTITY_TAKEN",
        f"{identity} already belongs to person:{owner}; unlink it there first.",
        409,
        {"identity": identity, "person": owner},
    )


@router.delete("/people/{person}", response_model=Person, responses=error_responses(403, 404))
async def delete_person(person: PersonPath, core: Core, caller: DirectoryWriter) -> Person:
    """Remove a person: their identities answer as nobody's from now on. Answers the person as they were."""
    bare = _bare(person)
    found = await core.store.people.get(bare)
    if found is None or not await core.store.people.remove(bare):
        raise _not_found(bare)
    await core.store.push.remove(bare)  # their browsers are no longer told anything
    return found


def signed_in_person(request: Request) -> str:
    """The person of the request's session (``request.state.person``, set by sign-in); 401 without one."""
    found: Any = getattr(request.state, "person", None)
    bare = found if isinstance(found, str) else getattr(found, "person", None)
    if not isinstance(bare, str) or not bare:
        raise GatewayError("UNAUTHORIZED", "Sign in first: a link code is for a signed-in person.", 401)
    return person_id(bare)


CurrentPerson = Annotated[str, Depends(signed_in_person)]


@router.post("/me/links", status_code=201, response_model=LinkCode, responses=error_responses(404, 429))
async def create_link(core: Core, person: CurrentPerson) -> JSONResponse:
    """A one-time code (10 minutes, single use) for the signed-in person: typing ``link <code>`` in a chat
    links the identity that typed it to them. A few codes per person per 10 minutes (429 beyond)."""
    code = await new_link_code(core.store.people, person)
    expires = datetime.now(UTC) + timedelta(milliseconds=CODE_TTL_MS)
    body = {
        "person": person,
        "code": code,
        "expires_at": expires.isoformat().replace("+00:00", "Z"),
        "expires_in_seconds": CODE_TTL_MS // 1000,
    }
    return JSONResponse(body, status_code=201)
