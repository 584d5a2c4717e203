"""The contract's error envelope for every failure: handlers, and the schema the OpenAPI document shows."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from gateway.base.errors import GatewayError
from gateway.base.logs import event

INVALID_PARAMS_STATUS = 422
_HTTP_CODES = {
    400: "VALIDATION_FAILED",
    401: "UNAUTHORIZED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    406: "NOT_ACCEPTABLE",
    413: "PAYLOAD_TOO_LARGE",
    415: "UNSUPPORTED_MEDIA_TYPE",
}


def invalid_param(name: str, where: str, problem: str) -> GatewayError:
    """422 INVALID_PARAMS for one request parameter outside the body (``where``: path, header, query)."""
    kind = {"path": "Path parameter", "header": "Header"}.get(where, "Parameter")
    return GatewayError(
        "INVALID_PARAMS",
        f"{kind} {name} is invalid: {problem}.",
        INVALID_PARAMS_STATUS,
        {"errors": [{"field": name, "in": where, "problem": problem}]},
    )


class ErrorBody(BaseModel):
    code: str = Field(description="Stable UPPER_SNAKE code, e.g. VALIDATION_FAILED.")
    message: str = Field(description="What went wrong and what to do about it.")
    details: dict[str, Any] = Field(default_factory=dict)


class ErrorEnvelope(BaseModel):
    """Every error the API answers: ``{"error": {"code", "message", "details"}}``."""

    error: ErrorBody


_DESCRIPTIONS = {
    400: "Bad request: the body failed validation (VALIDATION_FAILED) or an id is malformed.",
    401: "Missing or invalid bearer token (UNAUTHORIZED).",
    403: "The token's role, or the person named, may not do this (FORBIDDEN).",
    404: "No such object.",
    409: "Conflicts with the object's state.",
    413: "The request body is larger than the gateway accepts (PAYLOAD_TOO_LARGE).",
    422: "A path or query parameter failed validation (INVALID_PARAMS).",
    429: "Rate limit exceeded (RATE_LIMITED); retry after `Retry-After` seconds.",
    503: "The chat post failed (PROMPT_UNAVAILABLE); the question was not asked.",
}


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` entries for ``statuses`` (401, 413 and 422 always), all the error envelope."""
    wanted = sorted({401, 413, 422, *statuses})
    return {status: {"model": ErrorEnvelope, "description": _DESCRIPTIONS[status]} for status in wanted}


def envelope_response(error: GatewayError, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(error.envelope(), status_code=error.status, headers=headers)


def _where(loc: tuple[Any, ...]) -> str:
    """``("body", "questions", 0)`` → ``questions.0``; a whole-body error names ``body``."""
    if not loc:
        return ""
    return ".".join(str(part) for part in loc[1:]) or str(loc[0])


def validation_error(exc: RequestValidationError) -> GatewayError:
    """Body errors are 400 VALIDATION_FAILED; path, query and header errors are 422 INVALID_PARAMS."""
    errors = []
    body_error = False
    for raw in exc.errors():
        loc = tuple(raw.get("loc", ()))
        if loc and loc[0] == "body":
            body_error = True
        errors.append({"field": _where(loc), "in": str(loc[0]) if loc else "", "problem": raw.get("msg", "")})
    for raw in exc.errors():
        if raw.get("type") == "json_invalid":
            position = raw.get("loc", ("body", 0))[-1]
            message = f"The body is not valid JSON (at character {position})."
            return GatewayError("VALIDATION_FAILED", message, 400, {"position": position})
    if body_error:
        first = errors[0]
        where = f" at {first['field']}" if first["field"] else ""
        message = f"The request body is invalid{where}: {first['problem']}."
        return GatewayError("VALIDATION_FAILED", message, 400, {"errors": errors})
    first = errors[0] if errors else {"field": "", "problem": "invalid"}
    message = f"Parameter {first['field']!r} is invalid: {first['problem']}."
    return GatewayError("INVALID_PARAMS", message, INVALID_PARAMS_STATUS, {"errors": errors})


async def _gateway_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, GatewayError)
    retry_after = exc.details.get("retry_after") if exc.status in (429, 503) else None
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
    return envelope_response(exc, headers)


async def _validation_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return envelope_response(validation_error(exc))


async def _http_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = _HTTP_CODES.get(exc.status_code, "HTTP_ERROR")
    message = exc.detail if isinstance(exc.detail, str) else "The request failed."
    if exc.status_code == 404:
        message = "No such endpoint. See /openapi.json for the API's paths."
    headers = dict(exc.headers) if exc.headers else None
    return envelope_response(GatewayError(code, message, exc.status_code), headers)


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    event("api.unexpected_error", logging.ERROR, path=request.url.path, error=type(exc).__name__)
    error = GatewayError("INTERNAL", "The gateway failed unexpectedly; the failure was logged.", 500)
    return envelope_response(error)


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(GatewayError, _gateway_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
