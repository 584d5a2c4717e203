"""Bearer tokens with roles: who is calling, checked in constant time, and what each role may do."""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from gateway.base.errors import GatewayError
from gateway.base.settings import ApiToken

AGENT, OPERATOR = "agent", "operator"
PERSON = "person"  # a signed-in person's session (gateway.api.signin): answers as that person only

_bearer = HTTPBearer(
    auto_error=False, description="A token from THREADGATE_API_TOKENS (name:role:token[:agents])."
)


@dataclass(frozen=True, slots=True)
class Principal:
    """The caller: the token's name (never the token itself), its role, and the agents it acts for.

    ``agents`` None means every agent (``*``, or an operator token without an agents field).
    """

    name: str
    role: str
    agents: frozenset[str] | None = None

    def acts_for(self, agent: str) -> bool:
        """Whether this token may see and act on ``agent``'s runs, prompts and sessions."""
        return self.agents is None or agent in self.agents


class TokenTable:
    """The configured tokens. A lookup compares against every token, so timing says nothing."""

    def __init__(self, tokens: list[ApiToken]) -> None:
        self._tokens = [(token.token.get_secret_value().encode(), token) for token in tokens]

    def __len__(self) -> int:
        return len(self._tokens)

    def find(self, presented: str) -> Principal | None:
        candidate = presented.encode("utf-8", "surrogateescape")
        found: Principal | None = None
        for secret, token in self._tokens:
            if hmac.compare_digest(secret, candidate) and found is None:
                found = Principal(token.name, token.role, token.agents)
        return found


PRINCIPAL_SCOPE_KEY = "threadgate.principal"  # set by the admission layer once the token is checked


def _unauthorized(message: str) -> GatewayError:
    return GatewayError("UNAUTHORIZED", message, 401)


def authenticate(table: TokenTable, authorization: str | None) -> Principal:
    """The caller an ``Authorization`` header value names (``Bearer <token>``), or 401 UNAUTHORIZED."""
    if not len(table):
        raise _unauthorized("This gateway has no API tokens configured; set THREADGATE_API_TOKENS.")
    scheme, _, presented = (authorization or "").partition(" ")
    presented = presented.strip()
    if scheme.lower() != "bearer" or not presented:
        raise _unauthorized("Send Authorization: Bearer <token> with a token from THREADGATE_API_TOKENS.")
    found = table.find(presented)
    if found is None:
        raise _unauthorized("The bearer token is not valid on this gateway.")
    return found


async def principal(
    request: Request,
    _credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    """The caller the admission layer authenticated before the body was read (checked here otherwise)."""
    found = request.scope.get(PRINCIPAL_SCOPE_KEY)
    if isinstance(found, Principal):
        return found
    table: TokenTable = request.app.state.tokens
    return authenticate(table, request.headers.get("authorization"))


Caller = Annotated[Principal, Depends(principal)]


async def agent_caller(caller: Caller) -> Principal:
    """Agent-side writes (runs, prompts, messages into threads) need an ``agent`` token."""
    if caller.role != AGENT:
        raise GatewayError("FORBIDDEN", "This call needs an agent token.", 403, {"role": caller.role})
    return caller


async def operator_caller(caller: Caller) -> Principal:
    """Answers and agent definitions need an ``operator`` token; an agent's token can never answer."""
    if caller.role != OPERATOR:
        raise GatewayError(
            "FORBIDDEN",
            "This call needs an operator token: an agent's own token can never answer or manage approvers.",
            403,
            {"role": caller.role},
        )
    return caller


async def answer_caller(caller: Caller) -> Principal:
    """Answers take an operator token (answering for ``from``) or a signed-in person's session."""
    if caller.role == PERSON:
        return caller
    return await operator_caller(caller)


def answering_as(caller: Principal, named: str | None) -> str | None:
    """Who an answer is from: a session's own person, whatever was named; else the ``from`` named."""
    return caller.name if caller.role == PERSON else named


AgentCaller = Annotated[Principal, Depends(agent_caller)]
OperatorCaller = Annotated[Principal, Depends(operator_caller)]
AnswerCaller = Annotated[Principal, Depends(answer_caller)]
