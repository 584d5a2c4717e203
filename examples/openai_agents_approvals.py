"""An OpenAI Agents SDK agent whose approval-gated tool and questions are answered in chat.

Run a gateway (``threadgate serve``), then::

    export THREADGATE_URL=http://127.0.0.1:8787 THREADGATE_TOKEN=<an agent token>
    export THREADGATE_SESSION_CHANNEL=slack:C0456     # or telegram:-100123, discord:<id>, web:ops
    export THREADGATE_STARTED_BY=slack:U0123ABC      # who may answer (plus the agent's approvers)
    export OPENAI_API_KEY=...
    pip install 'threadgate[openai-agents]'
    python examples/openai_agents_approvals.py "Ship the release"
"""

from __future__ import annotations

import asyncio
import sys

from agents import Agent, function_tool

from gateway.client import ask_human_async
from gateway.integrations.frameworks.openai_agents import run_with_approvals


@function_tool(needs_approval=True)
def deploy(target: str) -> str:
    """Deploy the release to staging or production."""
    return f"deployed to {target}"


async def main(task: str) -> None:
    agent = Agent(
        name="Releaser",
        instructions="Ask the person where to deploy with ask_human_async, then deploy there.",
        tools=[deploy, function_tool(ask_human_async)],
    )
    # Every needs_approval call interrupts the run; each is asked in chat and the run resumed.
    result = await run_with_approvals(agent, task)
    print(result.final_output)


if __name__ == "__main__":
    asyncio.run(main(" ".join(sys.argv[1:]) or "Ship the release"))
