"""A form and a URL step, as every channel's fallback test raises them, and the text each must post."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from gateway.base.models import Prompt, PromptRequest

FORM: dict[str, Any] = {
    "kind": "form",
    "message": "Deploy settings",
    "requested_schema": {
        "type": "object",
        "properties": {
            "env": {"type": "string", "title": "Environment", "enum": ["stg", "prod"]},
            "replicas": {"type": "integer", "minimum": 1},
        },
        "required": ["env"],
    },
}
FORM_TEXT = (
    "Deploy settings\n\n"
    "1. Environment (env) — string: pick one, required\n"
    "     1. stg\n"
    "     2. prod\n\n"
    "2. replicas — integer: a whole number, at least 1, optional"
)
# A form of every field kind, answered natively by the platforms with form controls.
DEPLOY_FORM: dict[str, Any] = {
    "kind": "form",
    "message": "Deploy settings",
    "requested_schema": {
        "type": "object",
        "properties": {
            "env": {
                "type": "string",
                "title": "Environment",
                "enum": ["stg", "prod"],
                "enumNames": ["Staging", "Production"],
            },
            "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 10},
            "notify": {"type": "boolean", "title": "Notify the team", "default": False},
            "regions": {
                "type": "array",
                "title": "Regions",
                "items": {"type": "string", "enum": ["eu", "us", "ap"]},
            },
            "start": {"type": "string", "title": "Start on", "format": "date"},
            "contact": {"type": "string", "title": "Contact", "format": "email"},
            "note": {"type": "string", "title": "Note", "maxLength": 20},
        },
        "required": ["env", "replicas"],
    },
}
URL: dict[str, Any] = {
    "kind": "url",
    "message": "Connect your GitHub account",
    "url": "https://example.com/c",
}
URL_TEXT = "Connect your GitHub account\nhttps://example.com/c"


def prompt_of(payload: dict[str, Any], thread_id: str) -> Prompt:
    """A pending prompt of ``payload`` in ``thread_id``, as the core would post it."""
    request = PromptRequest.model_validate(payload)
    assert request.questions is not None
    now = datetime.now(UTC)
    return Prompt(
        prompt_id="prm_01J0000000000000000000FORM",
        run_id="run_01J0000000000000000000FORM",
        thread_id=thread_id,
        agent="ops",
        kind=request.kind,
        message=request.message,
        requested_schema=request.requested_schema,
        url=request.url,
        questions=request.questions,
        created_at=now,
        expires_at=now,
    )
