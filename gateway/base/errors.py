"""Errors as values: a stable code, a sentence a user can act on, an HTTP status, details."""

from __future__ import annotations

from typing import Any


class GatewayError(Exception):
    """An error a caller can act on. Rendered by the API as the contract's error envelope."""

    def __init__(self, code: str, message: str, status: int = 400, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.details = details or {}

    def envelope(self) -> dict[str, Any]:
        """The contract's error body: ``{"error": {"code", "message", "details"}}``."""
        return {"error": {"code": self.code, "message": self.message, "details": self.details}}

    def __repr__(self) -> str:
        return f"GatewayError({self.code!r}, {self.message!r}, status={self.status})"


def not_found(code: str, what: str, ident: str) -> GatewayError:
    return GatewayError(code, f"No {what} with id {ident!r}.", 404, {"id": ident})


def validation_failed(message: str, errors: list[dict[str, Any]] | None = None) -> GatewayError:
    return GatewayError("VALIDATION_FAILED", message, 400, {"errors": errors or []})
