"""A person's input on a prompt's controls, decoded by a platform: one small type per act, and what came
of it. The core runs each through its answer step (``gateway.decision.answer_step``), once per input.

A platform builds the act its event means (``Pick(prompt_id=…, sender=…, index=0, option=1)``) and hands
it to ``InboundSink.step``; it renders the ``StepResult`` (the notice privately where it can, the next
question or field as its own controls). ``index`` is always a question's (a form's field's).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar

from gateway.base.forms import FieldError
from gateway.base.models import InboundMessage, Prompt
from gateway.rules.outcomes import Outcome


class Act(StrEnum):
    """The name each act is logged with."""

    PICK = "pick"
    CHOOSE = "choose"
    TOGGLE = "toggle"
    SUBMIT = "submit"
    TEXT = "text"
    SKIP = "skip"
    ANSWERS = "answers"
    FIELDS = "fields"
    DONE = "done"
    DECLINE = "decline"
    OPEN = "open"
    ASK = "ask"
    ASKED = "asked"
    EDIT = "edit"
    REPLY = "reply"
    READ = "read"
    CLAIM = "claim"


@dataclass(frozen=True, slots=True, kw_only=True)
class Press:
    """What every act on a prompt's controls carries: the prompt, who acted, the platform's event id (the
    core's dedupe key) and the thread the event came from, or a test of it (a platform that knows only
    part of it); neither given: any thread of the prompt."""

    act: ClassVar[Act]
    prompt_id: str
    sender: str
    event_id: str = ""
    thread_id: str | None = None
    in_thread: Callable[[str], bool] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class OnQuestion(Press):
    """An act on one question (a form's field): ``index``."""

    index: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class Pick(OnQuestion):
    """Option ``option`` of a single choice. On an approval: ``grant`` approves for this session (the exact
    call, for the run); ``note`` is a deny's reason; ``arguments`` the call as edited (an approve)."""

    act = Act.PICK
    option: int
    grant: bool = False
    note: str | None = None
    arguments: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Choose(OnQuestion):
    """The ``options`` chosen in a select: one of a single choice, the ticks of a multi-select."""

    act = Act.CHOOSE
    options: tuple[int, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Toggle(OnQuestion):
    """Tick or untick ``option`` of a multi-select, ``ticked`` as shown now (None: no longer readable)."""

    act = Act.TOGGLE
    option: int
    ticked: frozenset[int] | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Submit(OnQuestion):
    """A multi-select's options ``ticked`` so far (None: the message's ticks can no longer be read)."""

    act = Act.SUBMIT
    ticked: frozenset[int] | None = frozenset()


@dataclass(frozen=True, slots=True, kw_only=True)
class Text(OnQuestion):
    """``text`` typed for a question (Other…, free text, a field's value; an approval's deny reason)."""

    act = Act.TEXT
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Skip(OnQuestion):
    """Leave an optional field empty."""

    act = Act.SKIP


@dataclass(frozen=True, slots=True, kw_only=True)
class Open(OnQuestion):
    """A form or text box is about to be shown: still open? what was given so far?"""

    act = Act.OPEN


@dataclass(frozen=True, slots=True, kw_only=True)
class Ask(OnQuestion):
    """A request for free text for the question is about to be sent."""

    act = Act.ASK


@dataclass(frozen=True, slots=True, kw_only=True)
class Asked(OnQuestion):
    """That request went out as message ``request``, asked from the controls' message ``anchor``."""

    act = Act.ASKED
    request: str
    anchor: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Answers(Press):
    """Every question's answer at once, one list per question."""

    act = Act.ANSWERS
    lists: list[list[str]]


@dataclass(frozen=True, slots=True, kw_only=True)
class Fields(Press):
    """A form's values as shown, by property; ``final`` hands the form over (else a part is kept)."""

    act = Act.FIELDS
    fields: dict[str, list[str]]
    final: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class Edit(Press):
    """Approve an approval's call as edited: argument name → [the value as typed in a form]."""

    act = Act.EDIT
    fields: dict[str, list[str]]


@dataclass(frozen=True, slots=True, kw_only=True)
class Done(Press):
    """A URL step is done."""

    act = Act.DONE


@dataclass(frozen=True, slots=True, kw_only=True)
class Decline(Press):
    """Decline a form or a URL step."""

    act = Act.DECLINE


@dataclass(frozen=True, slots=True, kw_only=True)
class Claim(Press):
    """Take the prompt: until the claim ends only the presser answers it (contract §11)."""

    act = Act.CLAIM


@dataclass(frozen=True, slots=True, kw_only=True)
class Read(Press):
    """Inputs that only read against their prompt (a card's or a submitted form's values): ``read`` turns
    the prompt into the act they make, or the notice that says why they are not taken."""

    act = Act.READ
    read: Callable[[Prompt], Press | str]


@dataclass(frozen=True, slots=True, kw_only=True)
class Reply:
    """A person's message replying to the text request ``request`` (a platform message id): the answer to
    the question it asked, or, when it asked none, the message as typed (received once, either way)."""

    act: ClassVar[Act] = Act.REPLY
    message: InboundMessage
    request: str


StepRequest = Press | Reply


class Status(StrEnum):
    """What came of an input, as the person sees it."""

    TAKEN = "taken"  # taken: answered, kept, a step done; the notice says which
    REFUSED = "refused"  # nothing was taken: shown as an alert where the platform has one
    TYPED = "typed"  # a reply that answers no text request, received as a typed message


@dataclass(frozen=True, slots=True)
class NextStep:
    """The question or field to ask next, and the answers given so far (by question id or property)."""

    index: int
    given: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class StepResult:
    """What came of an input: ``notice`` to tell the person, the core's ``outcome`` when it was handed
    over, the prompt as it stands, and what to show next (a question or field, a multi-select's ticks,
    the values not taken)."""

    notice: str
    status: Status = Status.TAKEN
    outcome: Outcome | None = None
    prompt: Prompt | None = None
    next: NextStep | None = None
    ticked: frozenset[int] | None = None  # a multi-select's ticks after a toggle
    errors: tuple[FieldError, ...] = ()
    anchor: str = ""  # the controls' message a reply's text request was asked from
    remark: str | None = None  # the core's own word on an answer it took (what an approve granted)

    @property
    def refused(self) -> bool:
        return self.status is Status.REFUSED


__all__ = [
    "Act",
    "Answers",
    "Ask",
    "Asked",
    "Choose",
    "Claim",
    "Decline",
    "Done",
    "Edit",
    "Fields",
    "NextStep",
    "OnQuestion",
    "Open",
    "Pick",
    "Press",
    "Read",
    "Reply",
    "Skip",
    "Status",
    "StepRequest",
    "StepResult",
    "Submit",
    "Text",
    "Toggle",
]
