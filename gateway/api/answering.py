"""People's answers over REST (seeds 002 and 003) turned into the core's answer and cancel calls."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from gateway import forms
from gateway.api.auth import Principal
from gateway.api.schemas import InputAction, RespondAnswer, RespondBody, RespondResult, StructuredAnswer
from gateway.api.scope import visible
from gateway.authz import may_answer
from gateway.errors import GatewayError, validation_failed
from gateway.granting import check_grant, not_recorded, record_grant
from gateway.grants import Grant, GrantRequest
from gateway.mapper import check_structured
from gateway.models import (
    APPROVE,
    DENY,
    Answer,
    Prompt,
    PromptKind,
    PromptState,
    Question,
    ReasonCode,
    Resolution,
    RunState,
    ToolCall,
)
from gateway.replies import DONE, form_answers
from gateway.service import AnswerStatus, Gateway, edited_call

DECLINED_REASON = "the person declined to answer"
CANCELLED_REASON = "cancelled by a person"
SKIPPED_REASON = "the person skipped the question"
ADMISSION_TTL_MS = 5_000


# How a settled prompt settled -------------------------------------------------------------------


async def settled_details(gateway: Gateway, prompt: Prompt) -> dict[str, Any]:
    """State, answers or reason, who and when: what a 409 tells the caller about the earlier outcome."""
    details: dict[str, Any] = {
        "prompt_id": prompt.prompt_id,
        "state": prompt.prompt_state.value,
        "settled_at": prompt.settled_at.isoformat() if prompt.settled_at else None,
    }
    if prompt.prompt_state is PromptState.ANSWERED:
        details["answers"] = [answer.model_dump(mode="json") for answer in prompt.answers or []]
        details["by"] = prompt.answered_by
        details["resolution"] = prompt.resolution.value if prompt.resolution else None
    else:
        details["reason"] = prompt.reason
        details["reason_code"] = prompt.reason_code.value if prompt.reason_code else None
        field = await gateway.store.get_prompt_field(prompt.thread_id, prompt.prompt_id, "cancelled_by")
        details["by"] = field or None
    return details


async def already_resolved(gateway: Gateway, code: str, prompt: Prompt) -> GatewayError:
    details = await settled_details(gateway, prompt)
    how = f"answered by {details['by']}" if prompt.prompt_state is PromptState.ANSWERED else "cancelled"
    if prompt.prompt_state is PromptState.CANCELLED and prompt.reason:
        how = f"cancelled ({prompt.reason})"
    message = f"Prompt {prompt.prompt_id} was already {how}; details say how it settled."
    return GatewayError(code, message, 409, details)


def _forbidden(prompt: Prompt, identity: str | None) -> GatewayError:
    if not identity:
        message = "Say who is answering: name a person allowed to answer (the run's starter or an approver)."
    else:
        message = (
            f"{identity} may not answer this prompt: only the run's starter and the agent's approvers can."
        )
    return GatewayError("FORBIDDEN", message, 403, {"prompt_id": prompt.prompt_id})


async def _check_may_answer(gateway: Gateway, prompt: Prompt, identity: str | None) -> str:
    if not identity or not await may_answer(gateway.store, prompt, identity):
        raise _forbidden(prompt, identity)
    return identity


async def _cancel_for(
    gateway: Gateway, prompt: Prompt, identity: str, reason: str, code: ReasonCode
) -> tuple[bool, Prompt]:
    """Cancel on a person's behalf. Returns (this call cancelled it, the prompt as it now stands)."""
    settlement = await gateway.cancel_prompt(prompt.prompt_id, reason, code, by=identity)
    if settlement.ok:
        return True, await gateway.get_prompt(prompt.prompt_id)
    if settlement.prompt is None:
        raise GatewayError("PROMPT_NOT_FOUND", f"No prompt with id {prompt.prompt_id!r}.", 404)
    return False, settlement.prompt


# Seed 002: POST /v1/agents/{agent}/inputs/{prompt_id} --------------------------------------------


def form_content(
    fields: list[forms.FormField], content: Any, key: str = "property", *, by_position: bool = False
) -> tuple[list[Answer], dict[str, Any]]:
    """A form's accepted content (typed values by property, or shown answers by question), checked by
    the one form validator: answers and typed content, or 400 VALIDATION_FAILED, one error per property.

    ``by_position``: the answers were typed against the numbered form's text, so a bare number may pick
    a choice by its position (after titles and values).
    """
    errors: list[forms.FieldError] = []
    if isinstance(content, list):
        by_name = {field.name: field for field in fields}
        typed: dict[str, Any] = {}
        for entry in content:
            name = entry.get("question_id") or next(
                (f.name for f in fields if f.title == entry.get("question")), None
            )
            field = by_name.get(name or "")
            if field is None:
                errors.append(
                    forms.FieldError(str(name or entry.get("question")), "is not a field of this form")
                )
                continue
            answer = list(entry.get("answer") or [])
            value, problem = forms.value_from_answer(field, answer, by_position=by_position)
            if problem is not None:
                errors.append(forms.FieldError(field.name, problem))
            elif value is not None:
                typed[field.name] = value
        content = typed
    accepted, more = forms.validate_content(fields, content)
    named = {error.property for error in errors}
    errors += [error for error in more if error.property not in named]  # one error per property
    if errors:
        problems = "; ".join(f"{error.property} {error.problem}" for error in errors)
        raise validation_failed(
            f"The form's content is invalid: {problems}.",
            [{key: error.property, "problem": error.problem} for error in errors],
        )
    return form_answers(fields, accepted), accepted


def _content_answers(prompt: Prompt, action: InputAction) -> tuple[str, list[dict[str, Any]] | None]:
    """The text or structured answers an accept (or an approval's decline) carries, checked by kind."""
    content = action.content
    if prompt.kind is PromptKind.URL:
        if content not in (None, True) and not (
            isinstance(content, str) and content.strip().casefold() == DONE
        ):
            raise validation_failed('A URL step is accepted with content omitted, true or "done".')
        return "", [{"question_id": "q1", "answer": [DONE]}]
    if prompt.kind is PromptKind.APPROVAL:
        if action.action == "decline":
            approve = False
        elif content is None or isinstance(content, bool):
            approve = content is not False
        else:
            raise validation_failed("An approval's content is true (approve) or false (deny), or omitted.")
        question = prompt.questions[0]
        return "", [{"question_id": question.id, "answer": [APPROVE if approve else DENY]}]
    if prompt.kind is PromptKind.TEXT:
        if not isinstance(content, str):
            raise validation_failed("A text prompt's content is the answer as a string.")
        return content, None
    if isinstance(content, str):
        return content, None
    if isinstance(content, list):
        entries = [entry.model_dump(exclude_none=True) for entry in content]
        if check_structured(prompt.questions, entries) is None:
            raise validation_failed(
                "The answers must have one entry per question, each naming its question by question_id "
                "or question text, with answer a list of strings.",
                [{"questions": [question.id for question in prompt.questions]}],
            )
        return "", entries
    raise validation_failed("This prompt's content is a list of structured answers, or a string.")


def _seed_answers(prompt: Prompt, answers: list[str] | list[StructuredAnswer]) -> Any:
    """``answers`` in the seed's shape as the ``content`` of the prompt's kind: an approval's
    ``["Approve"]``/``["Deny"]`` its boolean, a one-question prompt's values its structured answer."""
    if not answers or not isinstance(answers[0], str):
        return answers
    values = [value for value in answers if isinstance(value, str)]
    if prompt.kind is PromptKind.APPROVAL:
        picked = [value.strip().casefold() for value in values]
        if picked not in (["approve"], ["deny"]):
            raise validation_failed('An approval\'s answers are ["Approve"] or ["Deny"].')
        return picked == ["approve"]
    if len(prompt.questions) != 1:
        raise validation_failed(
            "This prompt asks several questions: send answers as the structured list, one per question."
        )
    return [StructuredAnswer(question_id=prompt.questions[0].id, answer=values)]


def already_voted(prompt: Prompt, identity: str) -> GatewayError:
    """409 ALREADY_VOTED: the person's vote was recorded before; votes so far in details."""
    return GatewayError(
        "ALREADY_VOTED",
        f"{identity} has already voted on prompt {prompt.prompt_id}; it needs another approver.",
        409,
        {
            "prompt_id": prompt.prompt_id,
            "approvals": prompt.approvals,
            "votes": [vote.model_dump(mode="json") for vote in prompt.votes],
        },
    )


async def _accept_form(gateway: Gateway, prompt: Prompt, identity: str, action: InputAction) -> Prompt:
    content: Any = action.content
    fields = prompt.form_fields()
    if isinstance(content, list):
        content = [entry.model_dump(exclude_none=True) for entry in content]
    elif isinstance(content, str):  # typed as in chat: a one-property form's value, or `name: value` lines
        lines = forms.parse_lines(fields, content) or ({fields[0].name: content} if len(fields) == 1 else {})
        content = [{"question_id": name, "answer": [value]} for name, value in lines.items()]
    shown, typed = form_content(fields, content, by_position=isinstance(action.content, str))
    result = await gateway.settle_answers(prompt, shown, identity, typed)
    if result.status is AnswerStatus.CONFLICT:
        raise await already_resolved(gateway, "ALREADY_RESOLVED", result.prompt)
    return result.prompt


@dataclass(frozen=True, slots=True)
class Acted:
    """What an answer route did: the prompt as it now stands, the grant this answer made, if any, and why
    none was made when the answer asked for one and settled the prompt without it."""

    prompt: Prompt
    grant: Grant | None = None
    grant_not_made: dict[str, str] | None = None

    def public(self) -> dict[str, Any]:
        """The prompt's JSON, with ``grant`` when the answer made one (else ``grant_not_made``, if asked)."""
        data = self.prompt.public()
        if self.grant is not None:
            data["grant"] = self.grant.model_dump(mode="json")
            data.setdefault("granted", self.grant.match.model_dump(mode="json"))  # as its record says
        if self.grant_not_made is not None:
            data["grant_not_made"] = self.grant_not_made
        return data


def _approves(action: InputAction) -> bool:
    if action.action != "accept":
        return False
    if action.answers is not None:
        picked = [value.strip().casefold() for value in action.answers if isinstance(value, str)]
        return picked == ["approve"]
    return action.content is None or action.content is True


def checked_grant(
    prompt: Prompt, grant: GrantRequest | None, approving: bool, arguments: dict[str, Any] | None
) -> None:
    """The one check of a ``grant`` on a REST answer, before anything is answered: against the call being
    approved, which is the call as edited when ``arguments`` edit it."""
    if grant is None:
        return
    edited: ToolCall | None = None
    if approving and arguments is not None and prompt.kind is PromptKind.APPROVAL:
        edited = edited_call(prompt, arguments)
    check_grant(prompt, grant, approving=approving, call=edited)


async def made_grant(
    gateway: Gateway, settled: Prompt, identity: str, grant: GrantRequest
) -> tuple[Grant | None, dict[str, str] | None]:
    """Record the grant an approve that settled ``settled`` asked for: the grant, or why none was made."""
    recorded = await record_grant(gateway.store, settled, identity, grant, gateway.now_ms())
    if isinstance(recorded, Grant):
        return recorded, None
    why = not_recorded(recorded)
    return None, {"reason": recorded.value, "message": f"Approved without a grant: {why}."}


async def act_on_input(
    gateway: Gateway, caller: Principal, agent: str, prompt_id: str, action: InputAction
) -> Acted:
    """Accept, decline or cancel an input for ``from``. The same outcome twice is fine; another is 409.

    Refusals in the contract's order: a prompt the token cannot see is 404 (it does not exist for it),
    then ``from`` not allowed 403, then a path naming another agent 404, then content 400 and state 409.
    A ``grant`` is checked with the content and recorded only when this approve settled the prompt.
    """
    prompt = await gateway.store.get_prompt(prompt_id)
    if prompt is None or not visible(caller, prompt.agent):
        raise GatewayError("PROMPT_NOT_FOUND", f"Agent {agent} has no input {prompt_id!r}.", 404)
    identity = await _check_may_answer(gateway, prompt, action.from_)
    if prompt.agent != agent:
        raise GatewayError("PROMPT_NOT_FOUND", f"Agent {agent} has no input {prompt_id!r}.", 404)
    checked_grant(prompt, action.grant, _approves(action), action.arguments)
    if action.action == "accept" and prompt.kind is PromptKind.FORM:
        return Acted(await _accept_form(gateway, prompt, identity, action))
    if action.answers is not None:
        action = action.model_copy(update={"content": _seed_answers(prompt, action.answers), "answers": None})
    if action.action == "accept" or (action.action == "decline" and prompt.kind is PromptKind.APPROVAL):
        text, answers = _content_answers(prompt, action)
        asked = action.grant.match if action.grant is not None else None
        result = await gateway.answer(
            prompt_id,
            identity,
            text=text,
            answers=answers,
            note=action.note,
            arguments=action.arguments,
            grant=asked,
        )
        if result.status is AnswerStatus.CONFLICT:
            raise await already_resolved(gateway, "ALREADY_RESOLVED", result.prompt)
        if result.status is AnswerStatus.ALREADY_VOTED:
            raise already_voted(result.prompt, identity)
        if action.grant is None or result.status is not AnswerStatus.ANSWERED:
            return Acted(result.prompt)
        return Acted(result.prompt, *await made_grant(gateway, result.prompt, identity, action.grant))
    declined = action.action == "decline"
    code = ReasonCode.DECLINED if declined else ReasonCode.CANCELLED
    reason = DECLINED_REASON if declined else CANCELLED_REASON
    changed, current = await _cancel_for(gateway, prompt, identity, reason, code)
    if changed or (current.prompt_state is PromptState.CANCELLED and current.reason_code is code):
        return Acted(current)
    raise await already_resolved(gateway, "ALREADY_RESOLVED", current)


# Seed 003: POST /v1/agent-runs/{runId}/threads/{threadId}/user-inputs/{requestId}/respond ------------


def _one_answer(question: Question, kind: PromptKind, entry: RespondAnswer) -> tuple[list[str], list[str]]:
    """The answer list for one question, and the problems found with it."""
    problems: list[str] = []
    by_fold = {label.casefold(): label for label in question.labels}
    chosen: list[str] = []
    for value in entry.selected:
        label = by_fold.get(value.casefold())
        if label is None:
            problems.append(f"{value!r} is not one of the options {question.labels}")
        elif label in chosen:
            problems.append(f"{label!r} is selected twice")
        else:
            chosen.append(label)
    other = entry.otherText
    if not question.options:
        if entry.selected:
            problems.append("this question has no options to select; answer with otherText")
        if other is None:
            problems.append("answer this free-text question with otherText")
        return ([other] if other is not None else []), problems
    if other is not None and kind is PromptKind.APPROVAL:
        problems.append("an approval is answered by selecting Approve or Deny, not with otherText")
    answer = chosen + ([other] if other is not None and other != "" else [])
    if not question.multi_select and len(answer) != 1:
        problems.append("select exactly one option, or give otherText")
    return answer, problems


def respond_answers(prompt: Prompt, entries: list[RespondAnswer]) -> list[Answer]:
    """Seed 003's answers checked against the pending questions: each question exactly once."""
    errors: list[dict[str, Any]] = []
    by_id = {question.id: question for question in prompt.questions}
    given: dict[str, RespondAnswer] = {}
    for entry in entries:
        if entry.questionId not in by_id:
            errors.append({"questionId": entry.questionId, "problem": "no such question in this prompt"})
        elif entry.questionId in given:
            errors.append({"questionId": entry.questionId, "problem": "answered twice"})
        else:
            given[entry.questionId] = entry
    for question_id in by_id:
        if question_id not in given:
            errors.append({"questionId": question_id, "problem": "not answered"})
    answers: list[Answer] = []
    for question in prompt.questions:
        found = given.get(question.id or "")
        if found is None:
            continue
        answer, problems = _one_answer(question, prompt.kind, found)
        errors.extend({"questionId": question.id, "problem": problem} for problem in problems)
        answers.append(Answer(question=question.question, question_id=question.id or "", answer=answer))
    if errors:
        raise validation_failed("The answers do not match the pending questions.", errors)
    return answers


def _respond_content(
    prompt: Prompt, entries: list[RespondAnswer]
) -> tuple[list[Answer], dict[str, Any] | None]:
    """Seed 003's answers by kind: a form's by property (``questionId``), checked by the form validator."""
    if prompt.kind is PromptKind.FORM:
        fields = prompt.form_fields()
        names = {field.name for field in fields}
        unknown = [
            {"questionId": e.questionId, "problem": "no such field in this form"}
            for e in entries
            if e.questionId not in names
        ]
        if unknown:
            raise validation_failed("The answers do not match the form's fields.", unknown)
        shown = [
            {"question_id": e.questionId, "answer": e.selected + ([e.otherText] if e.otherText else [])}
            for e in entries
        ]
        return form_content(fields, shown, key="questionId")
    answers = respond_answers(prompt, entries)
    if prompt.kind is PromptKind.URL:
        if [value.strip().casefold() for value in answers[0].answer] != [DONE]:
            raise validation_failed(
                'A URL step is answered with otherText "done" once the step is finished, or skipped.',
                [{"questionId": "q1", "problem": 'answer with otherText "done"'}],
            )
        answers = [answers[0].model_copy(update={"answer": [DONE]})]
    return answers, None


@contextlib.asynccontextmanager
async def admission(gateway: Gateway, thread_id: str) -> AsyncIterator[None]:
    """One answer admitted per thread at a time; a concurrent one is told TURN_ALREADY_ACTIVE."""
    token = uuid.uuid4().hex
    if not await gateway.store.admit(thread_id, token, ADMISSION_TTL_MS):
        raise GatewayError(
            "TURN_ALREADY_ACTIVE",
            "Another answer for this thread is being admitted right now; retry when it settles.",
            409,
            {"thread_id": thread_id, "retry_after": 1},
        )
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            await gateway.store.release_admission(thread_id, token)


def _no_thread(run_id: str, thread_id: str) -> GatewayError:
    return GatewayError(
        "AGENT_THREAD_NOT_FOUND", f"No thread {thread_id!r} with run {run_id!r}.", 404, {"id": thread_id}
    )


def _no_input(prompt_id: str) -> GatewayError:
    return GatewayError(
        "AGENT_USER_INPUT_NOT_FOUND", f"No user input {prompt_id!r} in this run.", 404, {"id": prompt_id}
    )


async def respond(
    gateway: Gateway,
    caller: Principal,
    run_id: str,
    thread_id: str,
    prompt_id: str,
    body: RespondBody,
    identity: str | None,
) -> RespondResult:
    """Answer or skip a pending prompt: hot while the agent waits on it, else parked as the next turn.

    Refusals in the contract's order: who may answer (403) before which run or thread (404) before the
    prompt's or run's state (409), so a stranger learns nothing about a prompt's state. A prompt the
    token cannot see, or none at all, is 404 (who may answer it cannot be asked).
    """
    prompt = await gateway.store.get_prompt(prompt_id)
    if prompt is not None and visible(caller, prompt.agent):
        identity = await _check_may_answer(gateway, prompt, identity)
    run = await gateway.store.get_run(run_id)
    if run is None or not visible(caller, run.agent) or run.thread_id != thread_id:
        raise _no_thread(run_id, thread_id)
    if prompt is None or not visible(caller, prompt.agent):
        raise _no_input(prompt_id)
    assert identity is not None  # checked above: the prompt is visible
    if prompt.thread_id != thread_id or prompt.run_id != run_id:
        raise _no_input(prompt_id)
    if body.answers is not None and run.state is RunState.ENDED:
        raise GatewayError(
            "AGENT_RUN_ENDED",
            f"Run {run_id} has ended, so an answer cannot start a turn; only skip works now.",
            409,
            {"run_id": run_id},
        )
    if not prompt.pending:
        if body.skip and prompt.reason_code is ReasonCode.RUN_ENDED:
            return RespondResult(requestId=prompt_id, status=Resolution.PARKED)
        raise await already_resolved(gateway, "AGENT_USER_INPUT_ALREADY_RESOLVED", prompt)
    answers, content = _respond_content(prompt, body.answers) if body.answers is not None else (None, None)
    edited = None
    approving = prompt.kind is PromptKind.APPROVAL and answers is not None and answers[0].answer == [APPROVE]
    if body.arguments is not None:
        edited = edited_call(prompt, body.arguments)
        if not approving:
            raise validation_failed("Edited arguments approve the call; send them with Approve selected.")
    checked_grant(prompt, body.grant, approving, body.arguments)
    async with admission(gateway, thread_id):
        if answers is None:
            hot = await gateway.store.is_watched(prompt.thread_id, prompt.prompt_id)
            changed, current = await _cancel_for(
                gateway, prompt, identity, SKIPPED_REASON, ReasonCode.DECLINED
            )
            if not changed:
                raise await already_resolved(gateway, "AGENT_USER_INPUT_ALREADY_RESOLVED", current)
            return RespondResult(requestId=prompt_id, status=Resolution.HOT if hot else Resolution.PARKED)
        asked = body.grant.match if body.grant is not None else None
        result = await gateway.settle_answers(
            prompt, answers, identity, content, note=body.note, edited=edited, grant=asked
        )
    if result.status is AnswerStatus.VOTED:
        return RespondResult(requestId=prompt_id, status="voted")
    if result.status is AnswerStatus.ALREADY_VOTED:
        raise already_voted(result.prompt, identity)
    if result.status is not AnswerStatus.ANSWERED:
        raise await already_resolved(gateway, "AGENT_USER_INPUT_ALREADY_RESOLVED", result.prompt)
    settled = result.prompt
    grant, not_made = (None, None)
    if body.grant is not None:
        grant, not_made = await made_grant(gateway, settled, identity, body.grant)
    return RespondResult(
        requestId=prompt_id,
        status=settled.resolution or Resolution.PARKED,
        turnId=settled.turn_id,
        grant=grant,
        grant_not_made=not_made,
    )
