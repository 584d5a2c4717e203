"""Pure conversions between agents' tool calls and Threadgate prompts, and back to what each tool expects."""

from __future__ import annotations

import json
from typing import Any, Literal

from gateway.base.models import APPROVE, DENY, MAX_QUESTION_CHARS, Prompt, PromptState, ReasonCode
from gateway.client.human import reason_given
from gateway.integrations.suggestions import Choice
from gateway.rules.mapper import AFFIRMATIVE

ASK_USER_QUESTION = "AskUserQuestion"
MAX_INLINE_COMMAND = 200
MAX_SHOWN = 1500


def _shown(text: str, limit: int = MAX_SHOWN) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def approval_question(tool_name: str, tool_input: dict[str, Any]) -> str:
    """The question a person sees for a tool call: the call itself, then the agent's stated reason."""
    command = tool_input.get("command")
    target = tool_input.get("file_path") or tool_input.get("path") or tool_input.get("url")
    if isinstance(command, str) and command.strip():
        if "\n" not in command and len(command) <= MAX_INLINE_COMMAND:
            text = f"Allow {tool_name} to run `{command}`?"
        else:
            text = f"Allow {tool_name} to run this?\n```\n{_shown(command)}\n```"
    elif isinstance(target, str) and target.strip():
        text = f"Allow {tool_name} on {_shown(target, 300)}?"
    elif tool_input:
        arguments = json.dumps(tool_input, ensure_ascii=False, sort_keys=True)
        text = f"Allow {tool_name} with {_shown(arguments, 600)}?"
    else:
        text = f"Allow {tool_name}?"
    description = tool_input.get("description")
    if isinstance(description, str) and description.strip():
        text += f"\n{_shown(description.strip(), 300)}"
    return text[:MAX_QUESTION_CHARS]


def approval_body(tool_name: str, tool_input: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The questions and ``tool_call`` of an approval prompt showing the real call."""
    questions = [{"question": approval_question(tool_name, tool_input)}]
    return questions, {"name": tool_name[:200], "arguments": tool_input}


ONCE = "Approve"
ONCE_DESCRIPTION = "this call only"


def approval_choices(
    questions: list[dict[str, Any]], offered: list[Choice]
) -> tuple[list[dict[str, Any]], list[Choice]]:
    """An approval's question with "always allow" choices between Approve and Deny (numbered 1, 2…, last),
    and the choices kept.

    A choice whose label is cut short is spelled out in full under the question: every rule and where it is
    kept. One that cannot be shown in full within the question's length is not offered at all.
    """
    question = questions[0]["question"]
    kept: list[Choice] = []
    spelled: list[str] = []
    for choice in offered:
        if choice.clipped:
            line = f"{len(kept) + 2}. {choice.full}"
            if len(_spelled_out(question, [*spelled, line])) > MAX_QUESTION_CHARS:
                continue
            spelled.append(line)
        kept.append(choice)
    options: list[dict[str, str | None]] = [{"label": ONCE, "description": ONCE_DESCRIPTION}]
    options += [{"label": choice.label, "description": choice.description} for choice in kept]
    options.append({"label": DENY, "description": None})
    with_choices = {**questions[0], "question": _spelled_out(question, spelled), "multiSelect": False}
    return [{**with_choices, "options": options}], kept


def _spelled_out(question: str, lines: list[str]) -> str:
    return question if not lines else f"{question}\n\nThe choices in full:\n" + "\n".join(lines)


def chosen_option(prompt: Prompt, offered: list[Choice]) -> Choice | Literal["once"] | None:
    """What the person picked on an approval with choices: an "always" Choice, ``"once"``, or None (deny).

    A reply that is no option reads like an approval's (seed 000): an affirmative token approves once, and
    anything else denies.
    """
    answers = prompt.answers or []
    if prompt.prompt_state is not PromptState.ANSWERED or not answers or len(answers[0].answer) != 1:
        return None
    picked = answers[0].answer[0]
    for choice in offered:
        if picked == choice.label:
            return choice
    if picked == ONCE or picked.strip().casefold() in AFFIRMATIVE:
        return "once"
    return None


def ask_user_questions(tool_input: dict[str, Any]) -> list[dict[str, Any]]:
    """AskUserQuestion's ``questions`` as prompt questions (question, header, options, multiSelect).

    Raises ValueError when the input has no questions list.
    """
    raw = tool_input.get("questions")
    if not isinstance(raw, list) or not raw:
        raise ValueError("AskUserQuestion input has no questions")
    questions: list[dict[str, Any]] = []
    for entry in raw:
        if not isinstance(entry, dict) or not isinstance(entry.get("question"), str):
            raise ValueError("each AskUserQuestion question needs its question text")
        multi_select = entry.get("multiSelect", False)
        if not isinstance(multi_select, bool):  # JSON booleans only, as everywhere: "false" is not false
            raise ValueError("an AskUserQuestion question's multiSelect is true or false")
        question: dict[str, Any] = {
            "question": entry["question"],
            "multiSelect": multi_select,
            "options": [
                {"label": option["label"], "description": option.get("description") or None}
                for option in entry.get("options") or []
                if isinstance(option, dict) and isinstance(option.get("label"), str)
            ],
        }
        if isinstance(entry.get("header"), str) and entry["header"].strip():
            question["header"] = entry["header"]
        questions.append(question)
    return questions


def answers_by_question(prompt: Prompt) -> dict[str, str]:
    """Answers as AskUserQuestion takes them: question text → label, several labels joined with ``", "``."""
    return {answer.question: ", ".join(answer.answer) for answer in prompt.answers or []}


def approved(prompt: Prompt) -> bool:
    answers = prompt.answers or []
    return prompt.prompt_state is PromptState.ANSWERED and bool(answers) and answers[0].answer == [APPROVE]


def declined(prompt: Prompt) -> bool:
    """The person declined (skipped) the question: a refusal, unlike expiry or a superseding prompt."""
    return prompt.prompt_state is PromptState.CANCELLED and prompt.reason_code is ReasonCode.DECLINED


def denial_message(prompt: Prompt, note: str | None = None) -> str:
    """What the agent reads of a denial: who denied it and, when they said why (the prompt's ``note``,
    unless ``note`` gives it), their words."""
    who = prompt.answered_by or "a person"
    reason = note if note is not None else reason_given(prompt.note)
    return f"Denied in chat by {who}: {reason}" if reason else f"Denied in chat by {who}."


def typed_reason(prompt: Prompt) -> str | None:
    """A person's own words on an approval raised as a question (with "always allow" choices): a reply that
    is no option denies, and says why."""
    answers = prompt.answers or []
    if not answers or len(answers[0].answer) != 1 or answers[0].answer[0] == DENY:
        return None
    return reason_given(answers[0].answer[0])


def edited_arguments(prompt: Prompt) -> dict[str, Any] | None:
    """The call's arguments as the person edited them before approving; None when approved as asked."""
    allowed, asked = prompt.approved_call, prompt.tool_call
    if allowed is None or asked is None or allowed.arguments == asked.arguments:
        return None
    return dict(allowed.arguments)


def approval_message(prompt: Prompt) -> str:
    """What the agent reads of an approval: who approved it, the call as edited, and their note."""
    text = f"Approved in chat by {prompt.answered_by or 'a person'}"
    edited = edited_arguments(prompt)
    if edited is not None:
        text += f", edited to {json.dumps(edited, ensure_ascii=False, sort_keys=True)}"
    note = reason_given(prompt.note)
    return f"{text}: {note}" if note else f"{text}."


def declined_message(_prompt: Prompt) -> str:
    return "The person declined to answer in chat."


def granted_message(grant_id: str) -> str:
    """Why a call ran without asking: a person approved such calls for the rest of the run."""
    return (
        f"Allowed by a grant a person made in chat for the rest of this run ({grant_id}); nobody was asked."
    )
