"""A Pydantic AI agent whose approval-required tool and deferred question are answered in chat.

Run a gateway (``threadgate serve``), then::

    export THREADGATE_URL=http://127.0.0.1:8787 THREADGATE_TOKEN=<an agent token>
    export THREADGATE_SESSION_CHANNEL=slack:C0456     # or telegram:-100123, discord:<id>, web:ops
    export THREADGATE_STARTED_BY=slack:U0123ABC      # who may answer (plus the agent's approvers)
    export OPENAI_API_KEY=...                         # or any model Pydantic AI supports: set MODEL
    pip install 'threadgate[pydantic-ai]' 'pydantic-ai-slim[openai]'
    python examples/pydantic_ai_deferred.py "Ship the release"
"""

from __future__ import annotations

import asyncio
import os
import sys

from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.exceptions import CallDeferred

from gateway.integrations.frameworks.pydantic_ai import ask_in_chat

agent = Agent(
    os.environ.get("MODEL", "openai:gpt-5"),
    # A call nobody could answer (the gateway down) stays pending and ends the run as DeferredToolRequests.
    output_type=[str, DeferredToolRequests],
    instructions="Ask who reviews the release, then deploy it.",
    capabilities=[ask_in_chat()],  # deferred calls are asked in chat and the run continues
)


@agent.tool_plain(requires_approval=True)
def deploy(target: str) -> str:
    """Deploy the release to staging or production."""
    return f"deployed to {target}"


@agent.tool_plain
def ask_reviewer(question: str, options: list[str]) -> str:
    """Ask a person to pick who reviews the release."""
    raise CallDeferred(kind="question")  # answered in chat: the chosen option is the result


async def main(task: str) -> None:
    result = await agent.run(task)
    if isinstance(result.output, DeferredToolRequests):
        pending = [call.tool_name for call in [*result.output.approvals, *result.output.calls]]
        print(f"Nobody could answer in chat; still pending: {', '.join(pending)}")
        return
    print(result.output)


if __name__ == "__main__":
    asyncio.run(main(" ".join(sys.argv[1:]) or "Ship the release"))
