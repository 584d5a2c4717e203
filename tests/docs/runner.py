"""Reading the runnable blocks out of the docs, and a person who answers whatever they raise."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gateway.base.models import Prompt, PromptKind
from gateway.client import Client
from gateway.process.commands.prompts import answer_content

REPO = Path(__file__).resolve().parents[2]
PAGES = [
    REPO / "README.md",
    *sorted((REPO / "docs").glob("*.md")),
    *sorted((REPO / "docs/channels").glob("*.md")),
]
SHELL = {"bash", "sh", "console"}
RUNNABLE = SHELL | {"python"}
FENCE = re.compile(r"^```(?P<lang>[A-Za-z0-9_+-]*)[^\n]*\n(?P<code>.*?)^```[ \t]*$", re.S | re.M)
MARK = re.compile(r"<!--\s*doc-runner:(?P<rest>.*?)-->", re.S)
SKIP = re.compile(r"\s*skip\s*\((?P<why>[^()]*\S[^()]*)\)\s*")


@dataclass(frozen=True, slots=True)
class Block:
    """One fenced block of a page: where it starts, its language, its text, and the mark above it."""

    page: Path
    line: int
    lang: str
    code: str
    mark: str | None  # the text of a ``<!-- doc-runner: … -->`` comment on the line above, if any

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"

    @property
    def skipped_because(self) -> str | None:
        found = SKIP.fullmatch(self.mark) if self.mark is not None else None
        return found.group("why").strip() if found else None

    def commands(self) -> str:
        """The shell text to run: for ``console``, the lines after ``$ `` (the rest is output)."""
        if self.lang != "console":
            return self.code
        return "\n".join(line[2:] for line in self.code.splitlines() if line.startswith("$ "))


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip().splitlines()
        mark = MARK.fullmatch(before[-1].strip()) if before else None
        found.append(
            Block(
                page,
                text.count("\n", 0, match.start()) + 1,
                match.group("lang").lower(),
                match.group("code"),
                mark.group("rest") if mark else None,
            )
        )
    return found


def runnable(page: Path) -> list[Block]:
    return [block for block in blocks(page) if block.lang in RUNNABLE]


class Answerer:
    """Answers every pending prompt of the agents the docs use (not the demo's own tour), as the inbox
    operator once it is made an approver: Approve, the first option, a form's first valid values, ``ok``."""

    def __init__(self, base_url: str, operator_token: str, operator: str, skip_agents: set[str]) -> None:
        self.base_url, self.token, self.operator = base_url, operator_token, operator
        self.skip_agents = skip_agents
        self.answered: list[Prompt] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="docs-answerer", daemon=True)

    def __enter__(self) -> Answerer:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        approvers_set: set[str] = set()
        with Client(self.base_url, self.token) as client:
            while not self._stop.wait(0.05):
                for prompt in client.list_prompts().items:
                    if prompt.agent in self.skip_agents:
                        continue
                    if prompt.agent not in approvers_set:
                        client.put_agent(prompt.agent, approvers=[self.operator])
                        approvers_set.add(prompt.agent)
                    answered = client.answer_input(
                        prompt.agent,
                        prompt.prompt_id,
                        "accept",
                        content=content_for(prompt),
                        from_=self.operator,
                    )
                    self.answered.append(answered)


def content_for(prompt: Prompt) -> Any:
    """A valid answer to any prompt, as a person in a hurry would give it."""
    if prompt.kind is PromptKind.APPROVAL:
        return answer_content(prompt, ["approve"], [])
    if prompt.kind is PromptKind.FORM:
        return {field.name: _first_valid(field) for field in prompt.form_fields() if field.required}
    if prompt.kind is PromptKind.TEXT or prompt.kind is PromptKind.URL:
        return "ok"
    pairs = [f"{question.id}={(question.options or [])[0].label}" for question in prompt.questions]
    return (
        answer_content(prompt, [], pairs) if all(question.options for question in prompt.questions) else "ok"
    )


def _first_valid(field: Any) -> Any:
    if field.choices:
        first = field.choices[0].value
        return [first] if field.type == "array" else first
    if field.type in ("integer", "number"):
        return int(field.minimum) if field.minimum is not None else 1
    if field.type == "boolean":
        return False
    return "ok"
