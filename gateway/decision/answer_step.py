"""One step of a person's answer through a platform's controls, decoded: checked against its prompt, kept
as a draft or handed to the core's receive, and what the person is told and asked next.

The core runs it once per input (``InboundSink.step``), for every platform; the acts are the types of
``gateway.rules.steps``. Who may answer, dedupe and first answer wins stay the core's (``receive``,
``save_draft``); the drafts' names and every notice's wording are here and in ``gateway.rules.notices``.
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from typing import Any, Protocol

from gateway.base.errors import GatewayError
from gateway.base.forms import FormField
from gateway.base.logs import event, failure
from gateway.base.models import APPROVE, DENY, MAX_TEXT_CHARS, InboundMessage, Prompt, PromptKind
from gateway.rules import notices
from gateway.rules.mapper import question_id, structured_answers
from gateway.rules.outcomes import Draft, DraftStatus, Outcome, Received
from gateway.rules.render import answers_summary
from gateway.rules.replies import DONE, SKIP, draft_name, next_field, read_draft
from gateway.rules.steps import (
    Answers,
    Ask,
    Asked,
    Choose,
    Claim,
    Decline,
    Edit,
    Fields,
    NextStep,
    OnQuestion,
    Open,
    Pick,
    Press,
    Read,
    Reply,
    Skip,
    Status,
    StepRequest,
    StepResult,
    Submit,
    Text,
    Toggle,
)
from gateway.rules.steps import Done as DoneAct
from gateway.rules.typed_edits import NotAnEdit, form_arguments
from gateway.store.outage import is_store_outage

DECLINE_TEXT = "decline"  # what a Decline press is logged as; the press itself says decline
_STEP_KINDS = (PromptKind.FORM, PromptKind.URL)


class StepSink(Protocol):
    """What a step needs of the core: its reads, drafts and receive."""

    async def receive(self, message: InboundMessage) -> Received: ...

    async def get_prompt(self, prompt_id: str) -> Prompt: ...

    async def save_draft(self, prompt_id: str, sender: str, name: str, values: dict[str, str]) -> Draft: ...

    async def get_draft(self, thread_id: str, name: str) -> dict[str, str]: ...

    async def take_claim(self, prompt: Prompt, sender: str) -> Received: ...


class _Refused(Exception):
    def __init__(self, result: StepResult) -> None:
        super().__init__(result.notice)
        self.result = result


def refused(notice: str, prompt: Prompt | None = None, nxt: NextStep | None = None) -> StepResult:
    return StepResult(notice=notice, status=Status.REFUSED, prompt=prompt, next=nxt)


def questions_draft(prompt_id: str) -> str:
    """The answers a prompt of several questions collects, one question at a time (named for the prompt)."""
    return prompt_id


def pages_draft(prompt_id: str, sender: str) -> str:
    """Each person's parts of a long form so far, until the form settles or expires."""
    return f"pages:{prompt_id}:{sender}"


def reply_draft(request: str) -> str:
    """Which question a text request asks."""
    return f"reply:{request}"


def _dumps(answers: dict[str, list[str]]) -> dict[str, str]:
    return {name: json.dumps(answer, ensure_ascii=False) for name, answer in answers.items()}


def _lists(values: dict[str, str]) -> dict[str, list[str]]:
    """A draft read back; a value that is not a list of strings is dropped (as if never given)."""
    answers: dict[str, list[str]] = {}
    for name, answer in read_draft(values).items():
        if isinstance(answer, list) and all(isinstance(item, str) for item in answer):
            answers[name] = answer
    return answers


async def step(sink: StepSink, request: StepRequest) -> StepResult:
    """What came of one decoded press, form or reply, and what to tell and ask the person next.

    Only the store's own unavailability is "try again"; any other error is a bug of ours: logged with its
    traceback, and the person is told that much (never that the store is down)."""
    try:
        if isinstance(request, Reply):
            return await _reply(sink, request)
        prompt = await _prompt(sink, request.prompt_id)
        if not any(_here(request, thread) for thread in (prompt.thread_id, *prompt.copy_threads)):
            return refused(notices.MISMATCH)
        if isinstance(request, Read):
            read = request.read(prompt)
            if isinstance(read, str):
                return refused(read if prompt.pending else notices.settled(prompt), prompt)
            if read.prompt_id != prompt.prompt_id or isinstance(read, Read):
                return refused(notices.MISMATCH)
            request = read
        if isinstance(request, Claim):
            return _claimed(await sink.take_claim(prompt, request.sender))
        return await _Steps(sink, request, prompt).run()
    except _Refused as refusal:
        event("answer_step.refused", logging.INFO, act=request.act.value, notice=refusal.result.notice)
        return refusal.result
    except Exception as exc:
        if is_store_outage(exc):  # the store is unreachable: say so, and let the person try again
            event("answer_step.failed", logging.WARNING, act=request.act.value, **failure(exc))
            return refused(notices.TRY_AGAIN)
        event("answer_step.bug", logging.ERROR, act=request.act.value, **failure(exc, with_traceback=True))
        return refused(notices.WENT_WRONG)


def _claimed(received: Received) -> StepResult:
    """A Claim press: taken (the presser holds it now), or refused with why (someone else holds it, they
    may not answer, it settled)."""
    taken = received.outcome is Outcome.KEPT
    return StepResult(
        notice=received.notice or "",
        status=Status.TAKEN if taken else Status.REFUSED,
        outcome=received.outcome,
        prompt=received.prompt,
    )


def _here(request: Press, thread_id: str) -> bool:
    if request.in_thread is not None:
        return request.in_thread(thread_id)
    return request.thread_id is None or request.thread_id == thread_id


async def _prompt(sink: StepSink, prompt_id: str) -> Prompt:
    try:
        return await sink.get_prompt(prompt_id)
    except GatewayError as exc:
        if exc.status == 404:
            raise _Refused(refused(notices.UNKNOWN_PROMPT)) from exc
        raise


async def _reply(sink: StepSink, request: Reply) -> StepResult:
    """A reply to a text request answers the question it asked; any other message is received as typed."""
    message = request.message
    target = await sink.get_draft(message.thread_id, reply_draft(request.request))
    if not target:
        received = await sink.receive(message)
        said = received.notice or ""
        return StepResult(notice=said, status=Status.TYPED, outcome=received.outcome, prompt=received.prompt)
    try:
        prompt_id, index, anchor = target["prompt"], int(target["question"]), target.get("anchor", "")
    except (KeyError, ValueError):
        return refused(notices.MISMATCH)
    prompt = await _prompt(sink, prompt_id)
    if prompt.thread_id != message.thread_id or index >= len(prompt.questions):
        return refused(notices.MISMATCH)
    as_text = Text(
        prompt_id=prompt_id,
        sender=message.sender,
        event_id=message.event_id or "",
        index=index,
        text=message.text,
    )
    result = await _Steps(sink, as_text, prompt).run()
    return replace(result, anchor=anchor)


class _Steps:
    """One step against its prompt, read once."""

    def __init__(self, sink: StepSink, request: Press, prompt: Prompt) -> None:
        self.sink, self.request, self.prompt = sink, request, prompt
        self.index = request.index if isinstance(request, OnQuestion) else 0

    async def run(self) -> StepResult:
        request, kind = self.request, self.prompt.kind
        if isinstance(request, Open):
            return await self._open()
        if isinstance(request, Decline) and kind in _STEP_KINDS:
            return await self.hand_over(text=DECLINE_TEXT, decline=True)
        if isinstance(request, DoneAct) and kind is PromptKind.URL:
            return await self.hand_over([[DONE]])
        if kind is PromptKind.FORM and isinstance(request, Fields):
            return await self._fields(request)
        if kind is PromptKind.FORM:
            return await self._field()
        if kind is not PromptKind.URL:
            return await self._question()
        return refused(notices.MISMATCH)

    # Checks ----------------------------------------------------------------------------------------

    async def check(self, name: str, values: dict[str, str] | None = None) -> dict[str, str]:
        """Save (or, without values, only check) a draft: refused as an answer would be, else the draft."""
        draft = await self.sink.save_draft(self.prompt.prompt_id, self.request.sender, name, values or {})
        if draft.status is DraftStatus.NOT_ALLOWED:
            raise _Refused(
                StepResult(
                    notice=notices.NOT_ALLOWED,
                    status=Status.REFUSED,
                    outcome=Outcome.NOT_ALLOWED,
                    prompt=self.prompt,
                )
            )
        if draft.status is DraftStatus.STALE:
            fresh = await self.fresh()
            raise _Refused(
                StepResult(
                    notice=notices.settled(fresh), status=Status.REFUSED, outcome=Outcome.STALE, prompt=fresh
                )
            )
        return draft.values

    async def fresh(self) -> Prompt:
        """The prompt read again when it was pending as read before (to say how it settled since)."""
        if not self.prompt.pending:
            return self.prompt
        try:
            return await self.sink.get_prompt(self.prompt.prompt_id)
        except Exception:
            return self.prompt

    def mismatch(self, fits: bool) -> None:
        if not fits:
            raise _Refused(refused(notices.MISMATCH))

    def option(self, labels: list[str]) -> int:
        request = self.request
        self.mismatch(isinstance(request, (Pick, Toggle)))
        assert isinstance(request, (Pick, Toggle))
        self.mismatch(0 <= request.option < len(labels))
        return request.option

    async def ticks(self, labels: list[str], name: str) -> frozenset[int]:
        """The ticks shown now, all options of the question; unreadable ones are said so once the press
        would be taken otherwise."""
        request = self.request
        self.mismatch(isinstance(request, (Toggle, Submit)))
        assert isinstance(request, (Toggle, Submit))
        ticked = request.ticked
        if ticked is None:
            await self.check(name)
            raise _Refused(refused(notices.TICKS_UNREADABLE))
        self.mismatch(all(0 <= index < len(labels) for index in ticked))
        return ticked

    def text(self) -> str:
        request = self.request
        self.mismatch(isinstance(request, Text))
        assert isinstance(request, Text)
        if not request.text.strip():
            raise _Refused(refused(notices.EMPTY_TEXT))
        return request.text

    # Questions -------------------------------------------------------------------------------------

    async def _question(self) -> StepResult:
        request, prompt, index = self.request, self.prompt, self.index
        if isinstance(request, Answers):
            lists = request.lists
            self.mismatch(prompt.kind is not PromptKind.APPROVAL and len(lists) == len(prompt.questions))
            return await self.hand_over(lists)
        self.mismatch(0 <= index < len(prompt.questions))
        question = prompt.questions[index]
        labels, multi = question.labels, question.multi_select
        if isinstance(request, Choose):  # a select: never an approval's, whose controls are its two buttons
            options = request.options
            self.mismatch(prompt.kind is not PromptKind.APPROVAL and len(set(options)) == len(options))
            if multi:
                self.mismatch(all(0 <= number < len(labels) for number in options))
                return await self._answer([label for number, label in enumerate(labels) if number in options])
            self.mismatch(bool(labels) and len(options) == 1 and 0 <= options[0] < len(labels))
            return await self._answer([labels[options[0]]])
        if isinstance(request, Pick):
            self.mismatch(bool(labels) and not multi)
            return await self._answer([labels[self.option(labels)]])
        if isinstance(request, Toggle):
            self.mismatch(multi)
            option, ticked = self.option(labels), await self.ticks(labels, questions_draft(prompt.prompt_id))
            await self.check(questions_draft(prompt.prompt_id))
            return self._toggled(labels, option, ticked)
        if isinstance(request, Submit):
            self.mismatch(multi)
            ticked = await self.ticks(labels, questions_draft(prompt.prompt_id))
            return await self._answer([label for number, label in enumerate(labels) if number in ticked])
        if prompt.kind is PromptKind.APPROVAL:
            return await self._approval()
        self.mismatch(isinstance(request, (Text, Ask, Asked)))
        if isinstance(request, Text):
            return await self._answer([self.text()])
        return await self._ask()

    async def _approval(self) -> StepResult:
        """An approval's reason (asked for, then given: a deny with that note) or its edited call."""
        request = self.request
        if isinstance(request, Edit):
            try:
                arguments = form_arguments(self.prompt, request.fields)
            except NotAnEdit as exc:
                return refused(notices.edit_not_taken(str(exc)), self.prompt)
            return await self.hand_over([[APPROVE]], arguments=arguments)
        self.mismatch(isinstance(request, (Text, Ask, Asked)))
        if isinstance(request, Text):
            return await self.hand_over([[DENY]], note=self.text())
        return await self._ask()

    async def _answer(self, answer: list[str]) -> StepResult:
        """Answer one question. With several, the answer is kept in a draft and the next unanswered
        question is asked; once every question has one, the whole set goes to the core."""
        prompt = self.prompt
        ids = [question_id(question, index) for index, question in enumerate(prompt.questions)]
        if len(ids) == 1:
            return await self.hand_over([answer])
        this = ids[self.index]
        given = _lists(await self.check(questions_draft(prompt.prompt_id), _dumps({this: answer})))
        missing = [index for index, key in enumerate(ids) if key not in given]
        if missing:
            return StepResult(
                notice=notices.next_question(missing[0] + 1, len(ids)),
                prompt=prompt,
                next=NextStep(missing[0], given),
            )
        return await self.hand_over([given[key] for key in ids])

    def _toggled(self, labels: list[str], option: int, ticked: frozenset[int]) -> StepResult:
        now = ticked ^ {option}
        notice = notices.toggled(labels[option], option in now)
        return StepResult(notice=notice, prompt=self.prompt, ticked=now)

    async def _ask(self) -> StepResult:
        """Check a text request before it is sent (``Ask``); remember which question it asks (``Asked``)."""
        request = self.request
        if not isinstance(request, Asked):
            await self.check(questions_draft(self.prompt.prompt_id))
            return StepResult(notice=notices.REPLY_BELOW, prompt=self.prompt)
        target = {"prompt": self.prompt.prompt_id, "question": str(request.index), "anchor": request.anchor}
        await self.check(reply_draft(request.request), target)
        return StepResult(notice=notices.REPLY_BELOW, prompt=self.prompt)

    async def _open(self) -> StepResult:
        """A form or text box about to be shown: only while the prompt is open; a long form's parts given."""
        if not self.prompt.pending:
            return StepResult(
                notice=notices.settled(self.prompt),
                status=Status.REFUSED,
                outcome=Outcome.STALE,
                prompt=self.prompt,
            )
        given: dict[str, list[str]] = {}
        if self.prompt.kind is PromptKind.FORM:
            name = pages_draft(self.prompt.prompt_id, self.request.sender)
            given = _lists(await self.sink.get_draft(self.prompt.thread_id, name))
        return StepResult(notice="", prompt=self.prompt, next=NextStep(self.index, given))

    # Forms -----------------------------------------------------------------------------------------

    async def _fields(self, request: Fields) -> StepResult:
        """A form's values as a person sees them (a whole modal, or a part of a long form)."""
        fields = self.prompt.form_fields()
        given = request.fields
        self.mismatch(set(given) <= {f.name for f in fields})
        name = pages_draft(self.prompt.prompt_id, request.sender)
        if not request.final:
            self.mismatch(bool(given))
            await self.check(name, _dumps(given))
            last = max(index for index, f in enumerate(fields) if f.name in given)
            return StepResult(
                notice=notices.fields_kept(fields, list(given)), prompt=self.prompt, next=NextStep(last + 1)
            )
        merged = _lists(await self.check(name, _dumps(given)))  # kept, to show again if not taken
        result = await self.hand_over([list(merged.get(f.name, [])) for f in fields])
        if result.outcome is Outcome.KEPT:  # not taken: the form again, with what was given
            return replace(result, next=NextStep(0, merged))
        return result

    async def _field(self) -> StepResult:
        """A step on one field of a form, as the text a person would type for it: the core's form
        validator reads it and keeps the draft; the next field the draft lacks is asked next."""
        request, index, fields = self.request, self.index, self.prompt.form_fields()
        self.mismatch(0 <= index < len(fields))
        one = fields[index]
        labels, array = one.labels, one.type == "array"
        writable = not array and not labels
        self.mismatch(
            (isinstance(request, Pick) and not array and bool(labels))
            or (isinstance(request, (Toggle, Submit)) and array)
            or (isinstance(request, (Text, Ask, Asked)) and writable)
            or (isinstance(request, Skip) and len(fields) > 1 and not one.required)
        )
        values = await self.check(draft_name(self.prompt.prompt_id))
        at = next_field(fields, read_draft(values)) if len(fields) > 1 else 0
        if at is not None and at != index:
            raise _Refused(refused(notices.moved_on(at + 1, len(fields)), self.prompt, NextStep(at)))
        if isinstance(request, (Ask, Asked)):
            return await self._ask()
        if isinstance(request, Toggle):
            return self._toggled(
                labels, self.option(labels), await self.ticks(labels, draft_name(self.prompt.prompt_id))
            )
        if isinstance(request, Submit):
            ticked = await self.ticks(labels, draft_name(self.prompt.prompt_id))
            typed = "\n".join(labels[number] for number in sorted(ticked))
        elif isinstance(request, Pick):
            typed = _typed_choice(one, self.option(labels))
        else:
            typed = SKIP if isinstance(request, Skip) else self.text()
        return await self._field_value(fields, typed)

    async def _field_value(self, fields: list[FormField], typed: str) -> StepResult:
        result = await self.hand_over(text=typed)
        if result.outcome is not Outcome.KEPT:
            return result
        at = 0
        if len(fields) > 1:
            at_or_none = next_field(
                fields,
                read_draft(
                    await self.sink.get_draft(self.prompt.thread_id, draft_name(self.prompt.prompt_id))
                ),
            )
            at = -1 if at_or_none is None else at_or_none
        if at >= 0 and at != self.index:
            return StepResult(
                notice=notices.next_field(at + 1, len(fields)),
                outcome=Outcome.KEPT,
                prompt=self.prompt,
                next=NextStep(at),
            )
        return replace(result, status=Status.REFUSED)

    # Handing over ----------------------------------------------------------------------------------

    async def hand_over(
        self,
        lists: list[list[str]] | None = None,
        *,
        text: str | None = None,
        decline: bool = False,
        note: str | None = None,
        arguments: dict[str, Any] | None = None,
    ) -> StepResult:
        """Hand an answer (one list per question), a typed value or a decline to the core's receive; an
        approval's with its ``note`` or edited ``arguments``."""
        prompt, request = self.prompt, self.request
        answers = structured_answers(prompt.questions, lists) if lists is not None else None
        summary = answers_summary(answers) if answers is not None else text or ""
        if isinstance(request, Pick):  # an approval's modal: a deny's reason, an approve's edited call
            note = request.note if note is None else note
            arguments = request.arguments if arguments is None else arguments
        received = await self.sink.receive(
            InboundMessage(
                thread_id=prompt.thread_id,
                sender=request.sender,
                text=summary[:MAX_TEXT_CHARS],
                answers=[answer.model_dump(mode="json") for answer in answers]
                if answers is not None
                else None,
                prompt_id=prompt.prompt_id,
                event_id=request.event_id[:200] or None,
                notify=False,
                decline=decline,
                note=None if note is None else note[:MAX_TEXT_CHARS],
                arguments=arguments,
                grant=isinstance(request, Pick) and request.grant,
            )
        )
        event(
            "answer_step.received",
            prompt_id=prompt.prompt_id,
            act=request.act.value,
            outcome=received.outcome.value,
        )
        asked = received.prompt or prompt
        if received.outcome is Outcome.STALE and received.prompt is None:
            asked = await self.fresh()
        if received.outcome is Outcome.ANSWERED and asked.answers:
            summary = answers_summary(asked.answers)
        ok = received.outcome in (Outcome.ANSWERED, Outcome.DECLINED, Outcome.DUPLICATE, Outcome.VOTED)
        return StepResult(
            notice=notices.outcome(received, asked, summary),
            status=Status.TAKEN if ok else Status.REFUSED,
            outcome=received.outcome,
            prompt=asked,
            errors=received.errors,
            remark=received.notice,
        )


def _typed_choice(one: FormField, option: int) -> str:
    """A choice as a person would type it: yes or no, else the choice's title (a typed number is a
    choice's value before it is a position)."""
    if one.type == "boolean":
        return "yes" if option == 0 else "no"
    return one.labels[option]


__all__ = ["StepSink", "step"]
