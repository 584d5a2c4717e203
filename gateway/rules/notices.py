"""What a person is told about their press, form or reply: every notice's wording, every platform. Pure."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from gateway.base.forms import FormField
from gateway.base.models import APPROVE, Prompt, PromptKind, PromptState, ThreadItem, ToolCall
from gateway.rules.grants import Grant, GrantMatch, describe, in_short
from gateway.rules.mapper import Unanswered
from gateway.rules.outcomes import Outcome, Received
from gateway.rules.render import answers_summary, votes_item

NOT_ALLOWED = (
    "Your answer was not taken: only the person who started this run and the agent's approvers can "
    "answer its prompts."
)
STALE = "This prompt is no longer open, so nothing was changed."
MISMATCH = "That control does not match its prompt, so nothing was changed."
UNKNOWN_PROMPT = "This control belongs to a prompt Threadgate no longer knows, so nothing was changed."
DUPLICATE = "That was already received, so nothing more was changed."
TRY_AGAIN = "Threadgate could not take your answer just now; nothing was changed. Please try again."
# A bug of ours, never the store: logged with its traceback; the person is told only that much.
WENT_WRONG = "Something went wrong on our side, so nothing was changed."
DECLINED = "You declined it; the agent is told."
SUPERSEDED = (
    "Not taken as an answer: the prompt was closed and your reply goes to the agent as a new message."
)
NOT_TAKEN = "Not taken; the form is still open."
# Claims (contract §11): the thread is told once who took a prompt; anyone else answering is told until when.
ON_IT = "{name} is on it"
ON_IT_UNTIL = "{name} is on it until {until}"
YOU_ARE_ON_IT = "You are on it until {until}; only you can answer it until then."
CLAIMED_BY_ANOTHER = "Someone else is on it, so nothing was changed."
NOTHING_TO_CLAIM = "There is no open prompt here to claim."
EMPTY_TEXT = "Type an answer before submitting; nothing was changed."
TICKS_UNREADABLE = (
    "The ticks on this message can no longer be read; reply to the prompt with the numbers of your "
    "choices instead (for example 1, 3)."
)
# A form of every question, sent with a question left open (the per-question problem beside its field).
UNANSWERED = {
    Unanswered.NONE: "Choose an option, or type your own answer below.",
    Unanswered.BOTH: "Choose an option or type your own answer, not both.",
    Unanswered.EMPTY: "Type an answer.",
}
# Who settled a prompt: a line under its settled message and its audit item, on every channel.
APPROVED_BY = "Approved by {who}"
# The approval card's control that approves the call and lets the same call through for the rest of the run.
APPROVE_FOR_SESSION = "Approve for this session"
# The control that takes a prompt (contract §11), on every card of a platform with buttons.
CLAIM = "Claim"
DENIED_BY = "Denied by {who}"
MARKED_DONE_BY = "Marked done by {who}"
ANSWERED_BY = "Answered by {who}"
DECLINED_BY = "Declined by {who}"
# After "Approved by <who>" when an operator token named the person (``from``): they did not sign in.
ASSERTED_BY = ", asserted by {token}"
# After "Approved by …" when that approve also let the call through for the rest of the run (a grant).
FOR_THE_SESSION = ", and for this session: {pattern}"
REPLY_BELOW = "Reply to the message below with your answer."
ASK_TEXT = "✎ {name}, reply to this message with your answer to: {question}"
ASK_REASON = "✎ {name}, reply to this message with your reason for denying: {question}"


ALREADY_VOTED = "Your vote on this approval was already recorded; it needs another approver."
# The same, when the person voted from another of their linked identities: one person, one vote.
ALREADY_VOTED_AS = "You already voted as {identity}; one person votes once. It needs another approver."


# An argument typed back in a form that edits an approval's call (beside its input).
NOT_A_NUMBER = "Enter a number."
CHOOSE_TRUE_OR_FALSE = "Choose true or false."
# A form with room for only some arguments' own inputs takes the rest as one JSON object.
REST_NOT_AN_OBJECT = 'Write the other arguments as one JSON object, like {"name": "value"}.'


def not_json(why: str) -> str:
    """An edited argument that was to be JSON and is not (``why``: the parser's words)."""
    return f"Not valid JSON ({why}); write the value as JSON, text in double quotes."


def approval_hint(editable: bool) -> str:
    """How a typed reply answers an approval, for a card that shows it under its controls."""
    hint = "Or reply in the thread: approve (or yes, ok) allows it; any other reply denies it, with your "
    hint += "words as the reason."
    if editable:
        hint += " To allow it with changed arguments, reply edit and name: value lines (or edit {…} as JSON)."
    return hint


def not_kept(problem: str) -> str:
    """A message that holds what the store cannot keep (``problem``: what), refused before anything."""
    return f"Not taken: the message holds {problem}; nothing was changed."


def edit_not_taken(why: str) -> str:
    """An edit of an approval's call that was not taken."""
    return f"Not taken: {why.rstrip('.')}. The approval is still open."


def votes_line(prompt: Prompt) -> str | None:
    """``Approved 1 of 2: alice``: an approval's votes so far (None when it needs one approver)."""
    if prompt.approvals <= 1:
        return None
    line = votes_item(prompt).text
    uncounted = [vote.by for vote in prompt.votes if not vote.counted]
    if uncounted:
        line += f" (not counted: {', '.join(uncounted)}, who started the run)"
    return line


def voted(prompt: Prompt) -> str:
    """What an approver is told when their approval is recorded and more are needed."""
    left = prompt.approvals - len(prompt.approvals_so_far)
    return f"Your approval was recorded ({votes_line(prompt)}); {left} more needed."


def granted(grant: Grant) -> str:
    """Said to a person whose typed "always" approved a call and let it through for the rest of the run."""
    return (
        f"Approved, and for the rest of this run: {describe(grant.match)} will run without asking. "
        f"Revoke it in the inbox (grant {grant.grant_id})."
    )


# Why an edited approve made no grant (an "Approve for this session" sent with edited arguments).
GRANT_WITH_EDITS = (
    "you edited the call, and a session grant is made only on a call as it was shown; the run's next "
    "call like it is asked about again"
)


def approved_without_grant(why: str) -> str:
    """Said to a person whose approve asked for a grant and settled the prompt without one."""
    return f"Approved, but not for the rest of this run: {why}."


def grant_refused(why: str) -> str:
    """Said to a person whose approve asked for a grant that cannot go with this prompt: nothing taken."""
    return f"Not taken: {why}. Approve it on its own (reply approve); the prompt is still open."


def reminder(names: list[str]) -> str:
    """A reminder posted in a prompt's thread by its escalation; ``names``: the people who may answer it,
    when the platform cannot mention them."""
    waiting = f" Waiting on {', '.join(names)}." if names else ""
    return f"🔔 Reminder: this prompt is still waiting for an answer.{waiting}"


def escalated(origin: str, waited_s: int) -> str:
    """The note above a copy of a prompt posted elsewhere by its escalation."""
    return (
        f"⏫ Escalated: a prompt in {origin} has waited {duration(waited_s)} for an answer. Answer it here "
        "or there; the first answer counts. Only the person who started its run and the agent's approvers "
        "can answer."
    )


def escalated_to_you(origin: str, waited_s: int) -> str:
    """The note above a copy of a prompt an escalation sends a person by direct message."""
    return (
        f"⏫ Escalated to you: a prompt in {origin} has waited {duration(waited_s)} for an answer. Answer "
        "it here or there; the first answer counts."
    )


def escalated_to(names: list[str], waited_s: int) -> str:
    """The note an escalation to people posts in the prompt's thread; ``names``: those the platform
    cannot mention (the rest are mentioned beside it)."""
    whom = ", ".join(names) if names else "you"
    return f"⏫ Escalated to {whom}: this prompt has waited {duration(waited_s)} for an answer."


def duration(seconds: int) -> str:
    """``45 seconds``, ``15 minutes``, ``2 hours``, ``3 days``: the largest whole unit."""
    for unit, size in (("day", 86_400), ("hour", 3600), ("minute", 60)):
        if (seconds >= size and seconds % size == 0) or seconds >= 2 * size:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds} second{'s' if seconds != 1 else ''}"


def answered(summary: str) -> str:
    return f"Your answer was recorded: {summary}"


def optional_names(fields: Sequence[FormField]) -> str:
    """``Team (team), notes``: fields as a person finds them in the form's text."""
    return ", ".join(f.name if f.title == f.name else f"{f.title} ({f.name})" for f in fields)


def form_answered(prompt: Prompt) -> str | None:
    """What the person who sent an answered form is told when optional fields were left empty (and how
    to fill one another time); None when every field has a value, or for anything but a form."""
    if prompt.kind is not PromptKind.FORM or prompt.content is None:
        return None
    empty = [f for f in prompt.form_fields() if f.name not in prompt.content]
    if not empty:
        return None
    summary = answers_summary(prompt.answers or [])
    return (
        f"{answered(summary)}. Optional, left empty: {optional_names(empty)}. To fill one, add a line "
        f"like {empty[0].name}: … to the reply that sends the form."
    )


def settled(prompt: Prompt | None) -> str:
    """Why a press on a settled prompt changed nothing, saying how it settled when that is known."""
    if prompt is not None and prompt.prompt_state is PromptState.ANSWERED:
        summary = answers_summary(prompt.answers or [])
        return f"This prompt was already answered ({summary}), so nothing was changed."
    if prompt is not None and prompt.prompt_state is PromptState.CANCELLED:
        return f"This prompt was cancelled ({prompt.reason or 'cancelled'}), so nothing was changed."
    return STALE


def outcome(received: Received, prompt: Prompt | None, summary: str) -> str:
    """What a person is told once the core took (or did not take) what they sent about ``prompt``."""
    if received.outcome is Outcome.ANSWERED:
        return received.notice or answered(summary)  # an approve that granted the call says so
    if received.outcome is Outcome.DECLINED:
        return DECLINED
    if received.outcome is Outcome.SUPERSEDED:
        return SUPERSEDED
    if received.outcome is Outcome.KEPT:
        return received.notice or NOT_TAKEN  # a value the form validator did not take
    if received.outcome is Outcome.NOT_ALLOWED:
        return NOT_ALLOWED
    if received.outcome is Outcome.DUPLICATE:
        return DUPLICATE
    if received.outcome is Outcome.VOTED and received.prompt is not None:
        return voted(received.prompt)
    if received.outcome is Outcome.ALREADY_VOTED:
        return received.notice or ALREADY_VOTED  # "You already voted as …" from another identity
    if received.outcome is Outcome.CLAIMED:
        return received.notice or CLAIMED_BY_ANOTHER
    return settled(received.prompt or prompt)


def for_sender(received: Received) -> str | None:
    """What a sender who reads the thread (on a chat page that shows it) is told beside it: why it was not
    taken."""
    if received.outcome is Outcome.NOT_ALLOWED:
        return NOT_ALLOWED
    if received.outcome is Outcome.STALE:
        return settled(received.prompt)
    if received.outcome in (Outcome.VOTED, Outcome.ALREADY_VOTED, Outcome.CLAIMED):
        return outcome(received, received.prompt, "")
    return received.notice


def toggled(label: str, ticked: bool) -> str:
    return f"{'✓' if ticked else '✗'} {label}"


def next_question(number: int, total: int) -> str:
    return f"Saved. Now question {number} of {total}."


def next_field(number: int, total: int) -> str:
    return f"Saved. Now field {number} of {total}."


def moved_on(number: int, total: int) -> str:
    """A press on a form field that already has a value (it was typed): the form is further on."""
    return f"That field has a value already; the buttons now show field {number} of {total}."


def fields_kept(fields: list[FormField], given: list[str]) -> str:
    """A part of a long form kept while the rest is asked for."""
    numbers = [index + 1 for index, field in enumerate(fields) if field.name in given]
    return f"Fields {numbers[0]}–{numbers[-1]} of {len(fields)} are kept. Continue with the rest:"


def ask_text(name: str, question: str, prompt: Prompt | None = None) -> str:
    """A request for free text, naming the person it is for; on an approval, for the reason it is denied."""
    if prompt is not None and prompt.kind is PromptKind.APPROVAL:
        return ASK_REASON.format(name=name, question=question)
    return ASK_TEXT.format(name=name, question=question)


def code(text: str) -> str:
    """A pattern as code, the way most chats mark it: ``npm test`` between backticks."""
    return f"`{text}`"


def settled_by(
    kind: str,
    answers: Sequence[Sequence[str]] | None,
    who: str,
    granted: GrantMatch | ToolCall | None = None,
    shown: Callable[[str], str] = code,
) -> str:
    """Who settled a prompt of ``kind``, in words: ``Approved by alice`` or ``Denied by alice`` for an
    approval, ``Marked done by alice`` for a URL step, ``Answered by alice`` for anything else answered,
    and ``Declined by alice`` when it was declined (``answers`` is None). An approve that let the call
    through for the rest of the run says so with the pattern ``granted`` (``shown`` marks it as the channel
    shows code): ``Approved by alice, and for this session: `npm test```."""
    if answers is None:
        template = DECLINED_BY
    elif kind == PromptKind.APPROVAL:
        approved = bool(answers) and list(answers[0]) == [APPROVE]
        template = APPROVED_BY if approved else DENIED_BY
        if approved and granted is not None:
            return template.format(who=who) + FOR_THE_SESSION.format(pattern=shown(in_short(granted)))
    elif kind == PromptKind.URL:
        template = MARKED_DONE_BY
    else:
        template = ANSWERED_BY
    return template.format(who=who)


def answered_by(
    item: ThreadItem, shown: Callable[[str], str] = str, pattern: Callable[[str], str] = code
) -> str | None:
    """The ``settled_by`` line of an answered prompt's audit item or settled message, read from its
    metadata; ``shown`` turns the answerer's identity into what the channel shows of a person (a display
    name, a mention), ``pattern`` a grant's pattern into its code (escaped as the channel needs). None for
    an item that names nobody (a cancelled prompt, an agent's message)."""
    prompt = item.metadata.get("prompt")
    if item.type != "pending_prompt_resolved" or not isinstance(prompt, dict):
        return None
    who = prompt.get("answered_by")
    if prompt.get("prompt_state") != PromptState.ANSWERED or not isinstance(who, str) or not who:
        return None
    entries = prompt.get("answers")
    answers = [
        [str(value) for value in entry.get("answer") or []]
        for entry in (entries if isinstance(entries, list) else [])
        if isinstance(entry, dict)
    ]
    line = settled_by(str(prompt.get("kind")), answers, shown(who), _granted(prompt), pattern)
    asserted = prompt.get("asserted_by")
    return line + ASSERTED_BY.format(token=asserted) if isinstance(asserted, str) and asserted else line


def _granted(prompt: dict[str, Any]) -> ToolCall | None:
    """The pattern an item's approve let through for the session, when its metadata names one that reads."""
    try:
        return ToolCall.model_validate(prompt["granted"]) if prompt.get("granted") else None
    except ValueError:
        return None


def claim_time(until: datetime) -> str:
    """When a claim ends, as a chat says it: ``HH:MM`` (UTC)."""
    return until.astimezone(UTC).strftime("%H:%M")


def on_it(name: str) -> str:
    """What the thread is told once when someone claims its prompt."""
    return ON_IT.format(name=name)


def on_it_until(name: str, until: datetime) -> str:
    """What anyone else answering a claimed prompt (or claiming it) is told."""
    return ON_IT_UNTIL.format(name=name, until=claim_time(until))


def you_are_on_it(until: datetime) -> str:
    """What a claimant is told on claiming again (the claim is renewed)."""
    return YOU_ARE_ON_IT.format(until=claim_time(until))
