"""``threadgate prompts list | answer | cancel``: the inbox from a terminal, through the HTTP API."""

from __future__ import annotations

import argparse
import textwrap
from datetime import UTC, datetime
from typing import Any

from gateway.base import platforms
from gateway.base.ids import thread_forms
from gateway.base.models import Prompt, PromptKind, PromptState
from gateway.client import Threadgate
from gateway.process.commands import Exit, command_actions, emit_json, fail, run_api

APPROVE_WORDS = {"approve", "approved", "yes", "y", "ok", "allow"}
DENY_WORDS = {"deny", "denied", "no", "n", "reject"}


def _age(moment: datetime) -> str:
    seconds = max(0, int((datetime.now(UTC) - moment).total_seconds()))
    for size, unit in ((86400, "d"), (3600, "h"), (60, "m")):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _clip(text: str, width: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def table(prompts: list[Prompt]) -> str:
    """Aligned columns, newest first, one prompt a line."""
    rows = [("PROMPT", "AGENT", "THREAD", "KIND", "AGE", "QUESTION")]
    for prompt in prompts:
        question = prompt.questions[0].question
        if len(prompt.questions) > 1:
            question += f" (+{len(prompt.questions) - 1} more)"
        rows.append(
            (
                prompt.prompt_id,
                prompt.agent,
                prompt.thread_id,
                prompt.kind.value,
                _age(prompt.created_at),
                _clip(question, 60),
            )
        )
    widths = [max(len(row[column]) for row in rows) for column in range(5)]
    return "\n".join(
        "  ".join(value.ljust(width) for value, width in zip(row[:5], widths, strict=True)) + "  " + row[5]
        for row in rows
    )


async def _all_pending(client: Threadgate, agent: str | None, thread: str | None, limit: int) -> list[Prompt]:
    found: list[Prompt] = []
    cursor: str | None = None
    while len(found) < limit:
        page = await client.list_prompts(agent=agent, thread_id=thread, cursor=cursor, limit=100)
        found.extend(page.items)
        cursor = page.cursor
        if cursor is None:
            break
    return found[:limit]


def list_command(args: argparse.Namespace) -> int:
    async def work(client: Threadgate) -> int:
        prompts = await _all_pending(client, args.agent, args.thread, args.limit)
        if args.json:
            emit_json({"items": [prompt.public() for prompt in prompts]})
        elif prompts:
            print(table(prompts))
        else:
            print("No prompt is waiting for an answer.")
        return Exit.OK

    return run_api(args.url, work)


def answer_content(prompt: Prompt, words: list[str], pairs: list[str]) -> Any:
    """The ``content`` of an accept for this prompt's kind, from the command's arguments.

    Raises ValueError with what to type instead when the arguments do not fit the prompt.
    """
    text = " ".join(words)
    if prompt.kind is PromptKind.APPROVAL:
        word = text.strip().casefold()
        if word in APPROVE_WORDS or word == "1":
            return True
        if word in DENY_WORDS or word == "2":
            return False
        raise ValueError("this prompt is an approval: answer approve or deny")
    if prompt.kind is PromptKind.TEXT or not pairs:
        if not text:
            raise ValueError("give the answer text, or --answer QUESTION_ID=VALUE for each question")
        return text
    if words:
        raise ValueError("give either the answer text or --answer pairs, not both")
    chosen: dict[str, list[str]] = {question.id or "": [] for question in prompt.questions}
    for pair in pairs:
        question_id, sep, value = pair.partition("=")
        if not sep or question_id not in chosen:
            ids = ", ".join(chosen)
            raise ValueError(f"--answer takes QUESTION_ID=VALUE with a question id of this prompt ({ids})")
        if value:
            chosen[question_id].append(value)
    return [{"question_id": question_id, "answer": answer} for question_id, answer in chosen.items()]


def _summary(prompt: Prompt) -> str:
    if prompt.prompt_state is PromptState.ANSWERED:
        answers = " · ".join(", ".join(answer.answer) or "(no selection)" for answer in prompt.answers or [])
        return f"{prompt.prompt_id} answered by {prompt.answered_by}: {answers}"
    return f"{prompt.prompt_id} cancelled: {prompt.reason}"


def _show_settled(args: argparse.Namespace, settled: Prompt) -> int:
    """How the prompt settled: JSON with ``--json``, else one line."""
    if args.json:
        emit_json(settled.public())
    else:
        print(_summary(settled))
    return Exit.OK


def answer_command(args: argparse.Namespace) -> int:
    async def work(client: Threadgate) -> int:
        prompt = await client.get_prompt(args.prompt_id)
        if args.decline:
            settled = await client.answer_input(prompt.agent, prompt.prompt_id, "decline", from_=args.as_)
        else:
            try:
                content = answer_content(prompt, args.text, args.answer)
            except ValueError as exc:
                return fail(str(exc), Exit.USAGE)
            settled = await client.answer_input(
                prompt.agent, prompt.prompt_id, "accept", content=content, from_=args.as_
            )
        return _show_settled(args, settled)

    return run_api(args.url, work)


def cancel_command(args: argparse.Namespace) -> int:
    """With ``--as``: cancel on a person's behalf (operator token). Without: as the agent (agent token)."""

    async def work(client: Threadgate) -> int:
        if args.as_:
            prompt = await client.get_prompt(args.prompt_id)
            settled = await client.answer_input(prompt.agent, prompt.prompt_id, "cancel", from_=args.as_)
        else:
            settled = await client.cancel_prompt(args.prompt_id, args.reason)
        return _show_settled(args, settled)

    return run_api(args.url, work)


def add_parsers(commands: Any, common: argparse.ArgumentParser) -> None:
    actions = command_actions(
        commands,
        "prompts",
        help="list, answer or cancel pending prompts (through the HTTP API)",
        description="Work the inbox of pending prompts across agents and threads, through the HTTP API at "
        "THREADGATE_URL with THREADGATE_TOKEN (an operator token answers; an agent token cancels).",
    )
    people = [spec.person_example for spec in platforms.installed()] or ["<platform>:<id>"]
    first, last = people[0], people[-1]

    listing = actions.add_parser("list", parents=[common], help="pending prompts, newest first")
    listing.add_argument("--agent", help="only this agent's prompts")
    listing.add_argument("--thread", help=f"only this thread's prompt (a thread id such as {thread_forms()})")
    listing.add_argument("--limit", type=int, default=1000, help="at most this many (default 1000)")
    listing.set_defaults(handler=list_command)

    answer = actions.add_parser(
        "answer",
        parents=[common],
        help="answer a prompt on a person's behalf",
        description=textwrap.fill(
            "Answer a pending prompt for IDENTITY, who must be allowed to answer it (the run's starter or "
            "one of the agent's approvers). Approvals take approve or deny; a text prompt takes the text; "
            "a question takes an option's number or label, free text, or one --answer per choice.",
            width=100,
        ),
        epilog="examples:\n"
        f"  threadgate prompts answer prm_01J… --as {first} approve\n"
        f"  threadgate prompts answer prm_01J… --as {last} 2\n"
        f"  threadgate prompts answer prm_01J… --as {last} --answer q1=staging "
        "--answer q2='KPI cards' --answer q2=Table --answer q3=dark",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    answer.add_argument("prompt_id", metavar="PROMPT_ID")
    answer.add_argument("text", nargs="*", metavar="ANSWER", help="approve/deny, an option, or free text")
    answer.add_argument("--as", dest="as_", required=True, metavar="IDENTITY", help="who is answering")
    answer.add_argument(
        "--answer",
        action="append",
        default=[],
        metavar="QUESTION_ID=VALUE",
        help="a structured answer; repeat for several questions or several choices",
    )
    answer.add_argument("--decline", action="store_true", help="decline instead of answering")
    answer.set_defaults(handler=answer_command, rest="text")

    cancel = actions.add_parser("cancel", parents=[common], help="cancel a pending prompt")
    cancel.add_argument("prompt_id", metavar="PROMPT_ID")
    cancel.add_argument("--reason", help="why (shown in the chat's audit item; agent token only)")
    cancel.add_argument(
        "--as", dest="as_", metavar="IDENTITY", help="cancel on this person's behalf (operator token)"
    )
    cancel.set_defaults(handler=cancel_command)
