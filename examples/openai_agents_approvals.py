"""An OpenAI Agents SDK agent whose approval-gated tool and questions are answered in chat, in one room.

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
from typing import Any

from agents import Agent, RunResult, function_tool

from gateway.client import Human
from gateway.integrations.frameworks.openai_agents import run_with_approvals


@function_tool(needs_approval=True)
def deploy(target: str) -> str:
    """Deploy the release to staging or production."""
    return f"deployed to {target}"


def build_agent(human: Human, model: Any = None) -> Agent[Any]:
    """The agent, its question tool asking through ``human``."""

    async def ask_human(question: str, options: list[str] | None = None) -> str:
        """Ask a person in chat and wait: the chosen option, or their own words."""
        return await human.ask_async(question, options)

    return Agent(
        name="Releaser",
        instructions="Ask the person where to deploy with ask_human, then deploy there.",
        tools=[deploy, function_tool(ask_human)],
        **({} if model is None else {"model": model}),
    )


async def release(task: str, model: Any = None, **run_args: Any) -> RunResult:
    """Run the agent: every needs_approval call interrupts the run, is asked in chat, and the run resumes.

    One Human asks both the questions and the approvals, so they wait in one room (one session's thread
    and run); ``ask_human_async`` beside ``run_with_approvals`` would ask under another agent name, in
    another room, unless ``THREADGATE_AGENT`` names one agent for both."""
    human = Human.from_env("openai-agents")
    return await run_with_approvals(build_agent(human, model), task, human=human, **run_args)


async def main(task: str) -> None:
    print((await release(task)).final_output)


if __name__ == "__main__":
    asyncio.run(main(" ".join(sys.argv[1:]) or "Ship the release"))
