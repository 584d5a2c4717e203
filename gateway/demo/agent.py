"""The demo agent: an ordinary API client that walks a chat through every prompt kind and echoes answers."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx

from gateway.base.logs import event
from gateway.base.models import APPROVE, Prompt, PromptState, ReasonCode
from gateway.client import Threadgate, ThreadgateError
from gateway.client.human import reason_given

AGENT = "demo"


@dataclass(frozen=True, slots=True)
class Step:
    """One prompt of the tour: what it shows, and the prompt the agent raises for it."""

    title: str
    kind: Literal["approval", "ask_user_question", "text", "form", "url"]
    questions: list[dict[str, Any]] = field(default_factory=list)
    tool_call: dict[str, Any] | None = None
    # A form's or a URL step's message, and its schema or link (seed 002's context.ask, requireUrl).
    message: str | None = None
    requested_schema: dict[str, Any] | None = None
    url: str | None = None
    # An approval whose call the person may edit before approving, within the tool's schema.
    editable: bool = False
    input_schema: dict[str, Any] | None = None


TOUR: tuple[Step, ...] = (
    Step(
        "an approval of a tool call",
        "approval",
        [
            {
                "question": "Allow db__drop to run? It deletes the staging database. "
                "To deny, you may say why: your words reach the agent.",
                "header": "Approval",
            }
        ],
        {"name": "db__drop", "arguments": {"database": "staging", "cascade": True}},
    ),
    Step(
        "an approval you can edit",
        "approval",
        [
            {
                "question": "Allow deploy to roll out api 2.4.0 on 6 replicas? Approve it as it is, or "
                "change the call first: type replicas: 3 (or edit {…} with every argument) and it runs "
                "as you edited it.",
                "header": "Edit",
            }
        ],
        {"name": "deploy", "arguments": {"service": "api", "version": "2.4.0", "replicas": 6}},
        editable=True,
        input_schema={
            "type": "object",
            "properties": {
                "service": {"type": "string", "enum": ["api", "frontend", "worker"]},
                "version": {"type": "string", "minLength": 1},
                "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
            },
            "required": ["service", "version", "replicas"],
            "additionalProperties": False,
        },
    ),
    Step(
        "a single-select question",
        "ask_user_question",
        [
            {
                "question": "What's the deployment target?",
                "header": "Target",
                "options": [
                    {"label": "staging", "description": "push to staging.example.com"},
                    {"label": "production", "description": "push to www.example.com"},
                ],
            }
        ],
    ),
    Step(
        "a multi-select question",
        "ask_user_question",
        [
            {
                "question": "Which sections should the dashboard have?",
                "header": "Sections",
                "multiSelect": True,
                "options": [{"label": "KPI cards"}, {"label": "Table"}, {"label": "Chart"}, {"label": "Map"}],
            }
        ],
    ),
    Step("a free-text question", "text", [{"question": "What should the release be called?"}]),
    Step(
        "a form of three questions",
        "ask_user_question",
        [
            {
                "question": "Where should the data come from?",
                "header": "Source",
                "options": [
                    {"label": "CSV import", "description": "upload a file"},
                    {"label": "Postgres", "description": "read the analytics replica"},
                ],
            },
            {
                "question": "Which sections?",
                "header": "Sections",
                "multiSelect": True,
                "options": [{"label": "KPI cards"}, {"label": "Table"}, {"label": "Chart"}],
            },
            {"question": "Any preference for visual style?", "header": "Style"},
        ],
    ),
    Step(
        "a form of typed fields",
        "form",
        message="Set up the new project.",
        requested_schema={
            "type": "object",
            "properties": {
                "project": {"type": "string", "title": "Project name", "minLength": 3, "maxLength": 40},
                "contact": {"type": "string", "title": "Contact email", "format": "email"},
                "region": {
                    "type": "string",
                    "title": "Region",
                    "oneOf": [
                        {"const": "eu-west", "title": "Europe (Ireland)"},
                        {"const": "us-east", "title": "US East (Virginia)"},
                    ],
                },
                "replicas": {
                    "type": "integer",
                    "title": "Replicas",
                    "minimum": 1,
                    "maximum": 5,
                    "default": 2,
                },
                "launch": {"type": "string", "title": "Launch date", "format": "date"},
                "public": {"type": "boolean", "title": "Public status page", "default": False},
                "alerts": {
                    "type": "array",
                    "title": "Alert channels",
                    "items": {
                        "type": "string",
                        "enum": ["email", "chat", "pager"],
                        "enumNames": ["Email", "Chat", "Pager"],
                    },
                    "maxItems": 2,
                },
            },
            "required": ["project", "contact", "region", "replicas"],
        },
    ),
    Step(
        "a step on another site",
        "url",
        message="Connect your (pretend) GitHub account at the link, then press Done.",
        url="https://example.com/connect-github",
    ),
)

WELCOME = (
    "Hi {name}! I'm the demo agent. I'll ask you {count} prompts, one of each kind Threadgate supports, "
    "and say back what I receive. Answer with the controls, or type a reply as you would in any chat: "
    "an option's number or label, approve, or your reason to deny, name: value lines to edit a call or "
    "fill the form, any text, done for the link."
)
GOODBYE = "That's the whole tour. Say anything to start it again."


def _listed(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _shown(value: Any) -> str:
    """A form's typed value as a person reads it: yes/no, a list joined, text as it is."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(str(entry) for entry in value) or "none"
    return str(value)


def _decision(prompt: Prompt, who: str, *, approved: bool) -> str:
    """An approval said back: a denial with the person's reason, an approval with the call as they edited
    it (the call the agent then makes)."""
    note = reason_given(prompt.note)
    if not approved:
        return f'Denied by {who}: "{note}".' if note else f"Denied by {who}."
    allowed, asked = prompt.approved_call, prompt.tool_call
    if allowed is None or asked is None or allowed.arguments == asked.arguments:
        return f"Approved by {who}."
    shown = ", ".join(f"{name} = {_shown(value)}" for name, value in allowed.arguments.items())
    return f"Approved by {who} as edited: I ran {allowed.name} with {shown}."


def echo_text(step: Step, prompt: Prompt) -> str:
    """What the agent says back: who answered and what, as one short sentence a person reads at a glance."""
    if prompt.prompt_state is not PromptState.ANSWERED:
        if prompt.reason_code == ReasonCode.DECLINED:
            return f"You declined {step.title}, so I'm leaving it out. Moving on."
        return f"The prompt for {step.title} was cancelled ({prompt.reason}). Moving on."
    who = prompt.answered_by or "someone"
    answers = prompt.answers or []
    if step.kind == "approval":
        return _decision(prompt, who, approved=bool(answers) and answers[0].answer == [APPROVE])
    if step.kind == "url":
        return f"{who} marked the step done."
    if step.kind == "form":
        content = prompt.content if isinstance(prompt.content, dict) else {}
        values = ", ".join(f"{name} = {_shown(value)}" for name, value in content.items())
        return f"Form from {who}: {values}."
    if step.kind == "text":
        return f'{who} answered: "{answers[0].answer[0]}".' if answers else f"{who} answered."
    if len(answers) == 1:
        return f"{who} chose {_listed(answers[0].answer)}." if answers[0].answer else f"{who} chose nothing."
    parts = []
    for question, answer in zip(step.questions, answers, strict=False):
        parts.append(f"{question.get('header') or answer.question} = {', '.join(answer.answer) or 'nothing'}")
    return f"{who} answered: " + "; ".join(parts) + "."


class DemoAgent:
    """Starts the tour in the demo's rooms of ``platform`` (the demo's local chat): ``room`` and the rooms
    of its visitors (``room-<name>``), wherever someone speaks while no tour runs there. Other rooms (your
    own agent's, a session's) are left to whoever raises prompts in them."""

    def __init__(
        self, client: Threadgate, *, platform: str, room: str, agent: str = AGENT, poll_s: float = 25.0
    ) -> None:
        self.client = client
        self.platform = platform
        self.room = f"{platform}:{room}"
        self.agent = agent
        self.poll_s = poll_s
        self._tours: dict[str, asyncio.Task[None]] = {}

    async def run(self) -> None:
        """Read people's messages for as long as the gateway runs (survives dropped connections)."""
        cursor: str | None = None
        try:
            while True:
                try:
                    page = await self.client.messages(after=cursor, wait=self.poll_s)
                except (httpx.TransportError, ThreadgateError) as exc:
                    event("demo.messages_failed", logging.WARNING, error=str(exc) or type(exc).__name__)
                    await asyncio.sleep(0.5)
                    continue
                cursor = page.cursor or cursor
                for message in page.items:
                    self._on_message(message)
        finally:
            for task in self._tours.values():
                task.cancel()
            for task in list(self._tours.values()):
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    def _on_message(self, message: dict[str, Any]) -> None:
        thread_id = str(message.get("thread_id", ""))
        sender = message.get("sender")
        ours = thread_id == self.room or thread_id.startswith(f"{self.room}-")
        if message.get("tag") or not ours or not sender:
            return  # parked answers belong to a tour already; other rooms are not the demo's
        running = self._tours.get(thread_id)
        if running is not None and not running.done():
            return
        self._tours[thread_id] = asyncio.create_task(self.tour(thread_id, str(sender)))

    async def tour(self, thread_id: str, person: str) -> None:
        """Raise each step's prompt in turn, wait for its answer, and echo what came back."""
        try:
            run = await self.client.create_run(thread_id, agent=self.agent, started_by=person)
            log_end = await self._log_end(thread_id)
            name = person.split(":", 1)[1]
            log_end = await self._say(thread_id, WELCOME.format(name=name, count=len(TOUR)), log_end)
            for step in TOUR:
                raised = await self._raise(run.run_id, step)
                settled = await self.client.wait_prompt(raised.prompt_id)
                log_end = await self._say(thread_id, echo_text(step, settled), log_end)
            await self._say(thread_id, GOODBYE, log_end)
            await self.client.end_run(run.run_id)
        except ThreadgateError as exc:
            event("demo.tour_failed", logging.WARNING, thread_id=thread_id, code=exc.code, error=exc.message)

    async def _raise(self, run_id: str, step: Step) -> Prompt:
        if step.message is not None:  # a form or a URL step: the gateway derives its questions
            return await self.client.raise_step(
                run_id, step.kind, message=step.message, requested_schema=step.requested_schema, url=step.url
            )
        return await self.client.raise_prompt(
            run_id,
            step.kind,
            step.questions,
            tool_call=step.tool_call,
            editable=step.editable,
            input_schema=step.input_schema,
        )

    async def _log_end(self, thread_id: str) -> str | None:
        """The cursor of the thread log's last item (None for an empty log)."""
        cursor: str | None = None
        while True:
            page = await self.client.thread_items(thread_id, after=cursor, limit=500)
            if not page.items:
                return cursor
            cursor = page.cursor

    async def _say(self, thread_id: str, text: str, after: str | None, timeout: float = 10.0) -> str | None:
        """Post a message and wait until it is in the thread's log, so the next prompt shows below it.

        Agent messages go out through the gateway's outbox while prompts are posted at once; waiting
        keeps the chat in the order the agent spoke. Returns the log cursor past the message.
        """
        await self.client.post_message(thread_id, text)
        deadline = asyncio.get_running_loop().time() + timeout
        while asyncio.get_running_loop().time() < deadline:
            page = await self.client.thread_items(thread_id, after=after, limit=100)
            for item in page.items:
                after = item["id"]
                if item.get("role") == "agent" and item.get("content") == [{"type": "text", "text": text}]:
                    return after
            if not page.items:
                await asyncio.sleep(0.05)
        return after
