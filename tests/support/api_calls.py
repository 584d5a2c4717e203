"""Agent-side API calls the HTTP tests share."""

from __future__ import annotations

from typing import Any

import httpx


async def raise_prompt(agent: httpx.AsyncClient, run_id: str, **body: Any) -> dict[str, Any]:
    """Raise a prompt (an approval unless ``kind``/``questions`` say otherwise); the 201 body."""
    body.setdefault("kind", "approval")
    body.setdefault("questions", [{"question": "Drop the staging database?"}])
    response = await agent.post(f"/v1/runs/{run_id}/prompts", json=body)
    assert response.status_code == 201, response.text
    prompt: dict[str, Any] = response.json()
    return prompt
