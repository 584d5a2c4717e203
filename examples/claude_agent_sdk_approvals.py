"""An agent on the Claude Agent SDK whose approvals and questions are answered from chat.

Run a gateway (``threadgate serve``), then::

    export THREADGATE_URL=http://127.0.0.1:8787 THREADGATE_TOKEN=<an agent token>
    export THREADGATE_SESSION_CHANNEL=slack:C0456     # or telegram:-100123, discord:<id>, web:ops
    export THREADGATE_STARTED_BY=slack:U0123ABC      # who may answer (plus the agent's approvers)
    python examples/claude_agent_sdk_approvals.py "Tidy up the build scripts in this repository"

The first tool call that needs permission posts "Claude Agent SDK in <repo>, session <id>" into the
channel; that call and every later one are asked in the thread under it, except those the agent's approval
policy lets through. To ask only about calls that change something, set it once with an operator token::

    curl -X PUT "$THREADGATE_URL/v1/agents/claude-agent-sdk" -H "Authorization: Bearer $OPERATOR_TOKEN" \
      -H 'Content-Type: application/json' -d '{"approval": {"default": "destructive"}}'
"""

from __future__ import annotations

import asyncio
import sys

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookContext,
    HookInput,
    HookJSONOutput,
    HookMatcher,
    ResultMessage,
    TextBlock,
)

from gateway.integrations.claude_agent_sdk import gateway_can_use_tool


async def keep_stream_open(
    _input: HookInput, _tool_use_id: str | None, _context: HookContext
) -> HookJSONOutput:
    # The SDK's Python guide pairs can_use_tool with a PreToolUse hook so the stream stays open for it.
    return {"continue_": True}


async def main(task: str) -> None:
    options = ClaudeAgentOptions(
        can_use_tool=gateway_can_use_tool(),
        permission_mode="default",  # ask before edits and commands: those questions go to the chat
        hooks={"PreToolUse": [HookMatcher(matcher=None, hooks=[keep_stream_open])]},
    )
    async with ClaudeSDKClient(options) as client:
        await client.query(task)
        async for message in client.receive_response():
            if isinstance(message, AssistantMessage):
                for block in message.content:
                    if isinstance(block, TextBlock):
                        print(block.text)
            elif isinstance(message, ResultMessage):
                print(f"[done: {message.subtype}]")


if __name__ == "__main__":
    asyncio.run(main(" ".join(sys.argv[1:]) or "List the files here, then ask me which one to summarise."))
