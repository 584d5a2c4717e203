"""The API's calls, written once for both clients: each is a generator that yields what to send and gets back
the decoded answer, so the sync and async clients differ only in how they send (httpx.Client or AsyncClient).

A flow yields ``Call`` (send this request; the decoded JSON comes back, or the error is thrown in) and
``Pause`` (sleep this long), and returns its result.
"""

from __future__ import annotations

import os
import time
import urllib.parse
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Generic, Literal, TypeVar

import httpx

from gateway.base.backoff import Retry
from gateway.base.models import APPROVE, AgentDefinition, Person, Prompt, PromptState, Run
from gateway.client.env import DEFAULT_URL as DEFAULT_URL
from gateway.client.env import gateway_url
from gateway.client.errors import ApprovalMismatch, PromptCancelled, ThreadgateError, error_from
from gateway.client.model_forms import form_schema as form_schema
from gateway.rules.grants import Grant, GrantMatch

POLICY = "policy"  # who decided when the agent's approval policy asked nobody
LONG_POLL_S = 60.0
MAX_BACKOFF_S = 2.0

T = TypeVar("T")


def auth_headers(token: str | None) -> dict[str, str]:
    """The bearer header for ``token``, else for ``THREADGATE_TOKEN`` (none when both are empty)."""
    secret = token if token is not None else os.environ.get("THREADGATE_TOKEN", "")
    return {"Authorization": f"Bearer {secret}"} if secret else {}


def base_url(url: str | None) -> str:
    """``url``, else ``THREADGATE_URL``, else the local default, without a trailing slash."""
    return url.rstrip("/") if url else gateway_url()


def seg(value: str) -> str:
    """``value`` as one path segment: every reserved character escaped (``/``, ``?``, ``#``, ``%``), and a
    segment of dots too (``.`` and ``..`` would otherwise be resolved away by the HTTP client)."""
    quoted = urllib.parse.quote(value, safe="")
    return quoted.replace(".", "%2E") if set(value) == {"."} else quoted


@dataclass(frozen=True, slots=True)
class Call:
    """One request to send; ``timeout`` None keeps the client's default."""

    method: str
    path: str
    body: Any = None
    params: dict[str, Any] | None = None
    headers: dict[str, str] | None = None
    timeout: float | None = None

    def request_args(self) -> dict[str, Any]:
        """Keyword arguments for ``httpx.Client.request`` and ``httpx.AsyncClient.request`` alike."""
        query = {key: value for key, value in (self.params or {}).items() if value is not None}
        return {
            "method": self.method,
            "url": self.path,
            "json": self.body,
            "params": query,
            "headers": self.headers,
            "timeout": self.timeout if self.timeout is not None else httpx.USE_CLIENT_DEFAULT,
        }


@dataclass(frozen=True, slots=True)
class Pause:
    """Sleep before the next step (a backoff while the gateway is unreachable)."""

    seconds: float


Step = Call | Pause
Flow = Generator[Step, Any, T]


def decode(response: httpx.Response) -> Any:
    """The JSON of a success; a failure raises the contract's error."""
    if response.is_error:
        raise error_from(response)
    return response.json()


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page of a list; pass ``cursor`` back for the next (``None`` at the end of a paged list)."""

    items: list[T]
    cursor: str | None


@dataclass(frozen=True, slots=True)
class Approval:
    """A decision on a tool call: ``allowed``, and ``by`` whom (a person's identity; ``policy`` for the
    agent's approval policy; ``grant:<grant_id>`` for a grant a person made for the run). ``prompt`` is the
    settled prompt when a person was asked. Truthy when allowed, and then the call runs with exactly
    ``arguments``: the call as approved, which is the call as asked unless the person edited it
    (``edited``). ``note`` is the person's words, when they gave any."""

    allowed: bool
    by: str | None
    prompt: Prompt | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    note: str | None = None

    def __bool__(self) -> bool:
        return self.allowed

    @property
    def edited(self) -> bool:
        """Whether the person approved the call with other arguments than the ones asked about."""
        if not self.allowed or self.prompt is None or self.prompt.tool_call is None:
            return False
        return self.arguments != self.prompt.tool_call.arguments


def _with_set(body: dict[str, Any], **optional: Any) -> dict[str, Any]:
    """``body`` and each ``optional`` field that is set: one left None is not sent, so the gateway's default
    applies."""
    return {**body, **{key: value for key, value in optional.items() if value is not None}}


def _backoff(delay: float) -> float:
    return min(delay * 2, MAX_BACKOFF_S)


# Agent side -------------------------------------------------------------------------------------------


def create_run(thread_id: str, agent: str, started_by: str | None) -> Flow[Run]:
    body = {"thread_id": thread_id, "agent": agent, "started_by": started_by}
    return Run.model_validate((yield Call("POST", "/v1/runs", body=body)))


def end_run(run_id: str) -> Flow[Run]:
    return Run.model_validate((yield Call("POST", f"/v1/runs/{seg(run_id)}/end")))


def abort_run(run_id: str) -> Flow[Run]:
    return Run.model_validate((yield Call("POST", f"/v1/runs/{seg(run_id)}/abort")))


def session_thread(session_key: str, channel: str, header: str) -> Flow[str]:
    body = {"channel": channel, "header": header}
    data = yield Call("PUT", f"/v1/sessions/{seg(session_key)}/thread", body=body)
    return str(data["thread_id"])


def session_run(session_key: str, thread_id: str, agent: str, started_by: str | None) -> Flow[Run]:
    body = {"thread_id": thread_id, "agent": agent, "started_by": started_by}
    data = yield Call("PUT", f"/v1/sessions/{seg(session_key)}/run", body=body)
    return Run.model_validate(data["run"])


def session_call(session_key: str, call_id: str) -> Flow[str | None]:
    try:
        data = yield Call("GET", f"/v1/sessions/{seg(session_key)}/calls/{seg(call_id)}")
    except ThreadgateError as exc:
        if exc.code == "CALL_NOT_FOUND":
            return None
        raise
    return str(data["prompt_id"])


def bind_session_call(
    session_key: str,
    call_id: str,
    prompt_id: str,
    replaces: str | None,
    tool_call: dict[str, Any] | None = None,
) -> Flow[str]:
    body = _with_set({"prompt_id": prompt_id, "replaces": replaces}, tool_call=tool_call)
    data = yield Call("PUT", f"/v1/sessions/{seg(session_key)}/calls/{seg(call_id)}", body=body)
    return str(data["prompt_id"])


def step_body(
    kind: str,
    message: str,
    requested_schema: dict[str, Any] | None,
    url: str | None,
    expires_in_seconds: int | None,
) -> dict[str, Any]:
    """The raise body of a form or a URL step (the gateway derives their questions)."""
    return _with_set(
        {"kind": kind, "message": message},
        requested_schema=requested_schema,
        url=url,
        expires_in_seconds=expires_in_seconds,
    )


def raise_prompt(run_id: str, body: dict[str, Any], reconnect_delay: float) -> Flow[Prompt]:
    """Raise a prompt, sending again while the gateway refuses connections (a refused one sent nothing)."""
    delay = reconnect_delay
    while True:
        try:
            return Prompt.model_validate((yield Call("POST", f"/v1/runs/{seg(run_id)}/prompts", body=body)))
        except httpx.ConnectError:
            yield Pause(delay)
            delay = _backoff(delay)


def prompt_body(
    kind: str,
    questions: list[dict[str, Any]],
    *,
    tool_call: dict[str, Any] | None = None,
    expires_in_seconds: int | None = None,
    editable: bool | None = None,
    input_schema: dict[str, Any] | None = None,
    approvals: int | None = None,
    starter_counts: bool | None = None,
    escalation: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The raise body: the approval's decision fields (contract §9) only when set, so other kinds never
    carry them."""
    return _with_set(
        {"kind": kind, "questions": questions},
        tool_call=tool_call,
        expires_in_seconds=expires_in_seconds,
        editable=editable or None,
        input_schema=input_schema,
        approvals=approvals,
        starter_counts=starter_counts,
        escalation=escalation,
    )


def get_prompt(prompt_id: str, wait: float = 0) -> Flow[Prompt]:
    call = Call("GET", f"/v1/prompts/{seg(prompt_id)}", params={"wait": wait or None}, timeout=wait + 30.0)
    return Prompt.model_validate((yield call))


def wait_prompt(prompt_id: str, timeout: float | None, reconnect_delay: float) -> Flow[Prompt]:
    """Long-poll until the prompt settles, across any number of polls and gateway restarts.

    A wait is only a read, so any connection failure or 5xx (a process restarting, a proxy with no
    backend) is retried with backoff and jitter, within ``timeout``. Raises TimeoutError after
    ``timeout`` seconds (None: wait as long as it takes).
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    backoff = Retry(base_s=reconnect_delay, max_s=MAX_BACKOFF_S)
    failures = 0
    while True:
        left = LONG_POLL_S if deadline is None else deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"prompt {prompt_id} is still pending after {timeout} s")
        try:
            prompt = yield from get_prompt(prompt_id, wait=min(left, LONG_POLL_S))
        except (httpx.TransportError, ThreadgateError) as exc:
            if isinstance(exc, ThreadgateError) and exc.status < 500:
                raise
            failures += 1
            yield Pause(min(backoff.delay(failures), left))
            continue
        failures = 0
        if prompt.prompt_state is not PromptState.PENDING:
            return prompt


def cancel_prompt(prompt_id: str, reason: str | None) -> Flow[Prompt]:
    body = {"reason": reason} if reason else None
    return Prompt.model_validate((yield Call("POST", f"/v1/prompts/{seg(prompt_id)}/cancel", body=body)))


def list_prompts(
    agent: str | None, thread_id: str | None, cursor: str | None, limit: int
) -> Flow[Page[Prompt]]:
    params = {"state": "pending", "agent": agent, "thread_id": thread_id, "cursor": cursor, "limit": limit}
    data = yield Call("GET", "/v1/prompts", params=params)
    return Page([Prompt.model_validate(item) for item in data["items"]], data["cursor"])


def post_message(thread_id: str, text: str) -> Flow[dict[str, Any]]:
    body = {"content": [{"type": "text", "text": text}]}
    return dict((yield Call("POST", f"/v1/threads/{seg(thread_id)}/items", body=body)))


def thread_items(thread_id: str, after: str | None, limit: int) -> Flow[Page[dict[str, Any]]]:
    data = yield Call("GET", f"/v1/threads/{seg(thread_id)}/items", params={"after": after, "limit": limit})
    return Page(list(data["items"]), data["cursor"])


def messages(after: str | None, wait: float, thread_id: str | None, limit: int) -> Flow[Page[dict[str, Any]]]:
    params = {"after": after, "wait": wait or None, "thread_id": thread_id, "limit": limit}
    data = yield Call("GET", "/v1/messages", params=params, timeout=wait + 30.0)
    return Page(list(data["items"]), data["cursor"])


def events_call(after: str | None, params: dict[str, str | None]) -> Call:
    """The request that opens the event stream (resuming after ``after``); read timeout off."""
    headers = {"Last-Event-ID": after} if after else {}
    return Call("GET", "/v1/events", params=params, headers=headers)


EVENTS_TIMEOUT = httpx.Timeout(10.0, read=None)


def history(
    filters: dict[str, str | None], after: str | None, limit: int, order: Literal["newest", "oldest"]
) -> Flow[Page[dict[str, Any]]]:
    params = {**filters, "after": after, "limit": limit, "order": order}
    data = yield Call("GET", "/v1/history", params=params)
    return Page(list(data["items"]), data["next"])


def moment(value: str | datetime | None) -> str | None:
    """A ``since``/``until`` as the API takes it: RFC 3339 (a datetime without a zone is UTC)."""
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).isoformat()
    return value


# Human side -------------------------------------------------------------------------------------------


def list_inputs(agent: str, cursor: str | None, limit: int) -> Flow[Page[Prompt]]:
    params = {"state": "pending", "cursor": cursor, "limit": limit}
    data = yield Call("GET", f"/v1/agents/{seg(agent)}/inputs", params=params)
    return Page([Prompt.model_validate(item) for item in data["items"]], data["cursor"])


def answer_input(
    agent: str,
    prompt_id: str,
    action: Literal["accept", "decline", "cancel"],
    content: Any,
    from_: str | None,
    grant: GrantMatch | dict[str, Any] | None = None,
    *,
    answers: list[Any] | None = None,
    note: str | None = None,
    arguments: dict[str, Any] | None = None,
) -> Flow[Prompt]:
    """Answer an input; with ``grant`` (a pattern: see ``gateway.rules.grants``) the approve also lets the
    run's
    later matching calls through (``list_grants`` shows the grant made). ``note`` is the person's reason,
    ``arguments`` the call as they edited it (approving it)."""
    match = grant.model_dump(mode="json") if isinstance(grant, GrantMatch) else grant
    body = _with_set(
        {"action": action, "from": from_},
        content=content,
        grant={"scope": "run", "match": match} if match is not None else None,
        answers=answers,
        note=note,
        arguments=arguments,
    )
    data = yield Call("POST", f"/v1/agents/{seg(agent)}/inputs/{seg(prompt_id)}", body=body)
    data.pop("grant", None)  # the grant made, listed by list_grants; the rest is the prompt
    return Prompt.model_validate(data)


def list_grants(run_id: str) -> Flow[list[Grant]]:
    data = yield Call("GET", f"/v1/runs/{seg(run_id)}/grants")
    return [Grant.model_validate(item) for item in data["items"]]


def revoke_grant(run_id: str, grant_id: str, from_: str | None) -> Flow[Grant]:
    path = f"/v1/runs/{seg(run_id)}/grants/{seg(grant_id)}"
    return Grant.model_validate((yield Call("DELETE", path, params={"from": from_})))


def respond(
    run_id: str,
    thread_id: str,
    request_id: str,
    answers: list[dict[str, Any]] | None,
    skip: bool,
    from_: str | None,
    *,
    note: str | None = None,
    arguments: dict[str, Any] | None = None,
) -> Flow[dict[str, Any]]:
    body: dict[str, Any] = {"skip": True} if skip else {"answers": answers or []}
    body = _with_set(body, note=note, arguments=arguments)
    headers = {"X-Threadgate-From": from_} if from_ else None
    path = f"/v1/agent-runs/{seg(run_id)}/threads/{seg(thread_id)}/user-inputs/{seg(request_id)}/respond"
    return dict((yield Call("POST", path, body=body, headers=headers)))


def put_agent(
    agent: str,
    approvers: list[str],
    expires_in_seconds: int | None,
    on_unmatched_reply: str | None = None,
    approval: dict[str, Any] | None = None,
    escalation: list[dict[str, Any]] | None = None,
    require_sign_in: bool | None = None,
) -> Flow[AgentDefinition]:
    """Define an agent (the whole definition: what is left out takes its default)."""
    human = _with_set(
        {"approvers": approvers},
        expires_in_seconds=expires_in_seconds,
        on_unmatched_reply=on_unmatched_reply,
        escalation=escalation,
        require_sign_in=require_sign_in,
    )
    body = _with_set({"human_input": human}, approval=approval)
    data = yield Call("PUT", f"/v1/agents/{seg(agent)}", body=body)
    return AgentDefinition.model_validate(data)


def get_agent(agent: str) -> Flow[AgentDefinition]:
    return AgentDefinition.model_validate((yield Call("GET", f"/v1/agents/{seg(agent)}")))


def list_people() -> Flow[list[Person]]:
    data = yield Call("GET", "/v1/people")
    return [Person.model_validate(item) for item in data["items"]]


def get_person(person: str) -> Flow[Person]:
    return Person.model_validate((yield Call("GET", f"/v1/people/{seg(person)}")))


def put_person(
    person: str, name: str | None, email: str | None, identities: list[str], groups: list[str]
) -> Flow[Person]:
    """Create or replace a person whole."""
    body = {"name": name, "email": email, "identities": identities, "groups": groups}
    return Person.model_validate((yield Call("PUT", f"/v1/people/{seg(person)}", body=body)))


def delete_person(person: str) -> Flow[Person]:
    return Person.model_validate((yield Call("DELETE", f"/v1/people/{seg(person)}")))


# Helpers ----------------------------------------------------------------------------------------------


def ask(
    run_id: str,
    question: str,
    options: list[str] | None,
    *,
    multi_select: bool,
    header: str | None,
    expires_in_seconds: int | None,
    timeout: float | None,
    reconnect_delay: float,
    on_raised: Callable[[Prompt], None] | None = None,
) -> Flow[list[str]]:
    """One question, answered: the chosen labels or the person's own text; PromptCancelled if unanswered.

    ``on_raised`` is told the prompt once it is asked (to say where it waits)."""
    entry: dict[str, Any] = {"question": question, "multiSelect": multi_select}
    if options:
        entry["options"] = [{"label": label} for label in options]
    if header is not None:
        entry["header"] = header
    body = prompt_body("ask_user_question", [entry], expires_in_seconds=expires_in_seconds)
    raised = yield from raise_prompt(run_id, body, reconnect_delay)
    if on_raised is not None:
        on_raised(raised)
    prompt = yield from wait_prompt(raised.prompt_id, timeout, reconnect_delay)
    if prompt.prompt_state is not PromptState.ANSWERED or not prompt.answers:
        raise PromptCancelled(prompt)
    return list(prompt.answers[0].answer)


POLICY = "policy"  # who decided when the agent's approval policy asked nobody
GRANT_PREFIX = "grant:"  # who decided, before the grant's id, when a grant of the run let the call through


def approval_body(
    tool: str,
    arguments: dict[str, Any],
    destructive: bool | None,
    question: str | None,
    expires_in_seconds: int | None,
    *,
    editable: bool = False,
    input_schema: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The body of ``POST /v1/runs/{run_id}/approvals``: the call, and the optional fields that are set."""
    return _with_set(
        {"tool_call": {"name": tool, "arguments": arguments}},
        destructive=destructive,
        question=question,
        expires_in_seconds=expires_in_seconds,
        editable=editable or None,
        input_schema=input_schema,
    )


@dataclass(frozen=True, slots=True)
class Allowed:
    """A tool call that may run without asking anyone now: ``by`` is ``policy`` (the agent's approval
    policy) or ``grant:<grant_id>`` (a person approved such calls for the rest of the run)."""

    by: str

    @property
    def by_grant(self) -> bool:
        """Whether a grant a person made for the run let the call through (not the policy)."""
        return self.by.startswith(GRANT_PREFIX)

    @property
    def grant_id(self) -> str | None:
        """The grant that let the call through; None when it was the policy."""
        return self.by.removeprefix(GRANT_PREFIX) if self.by.startswith(GRANT_PREFIX) else None


def approval_decision(run_id: str, body: dict[str, Any], reconnect_delay: float) -> Flow[Prompt | Allowed]:
    """A tool call put to the gateway: Allowed when nobody needs asking (a grant of the run, or the agent's
    approval policy), else the approval prompt it raised (not waited for). Sent again while the gateway
    refuses connections (a refused one sent nothing)."""
    delay = reconnect_delay
    while True:
        try:
            data = yield Call("POST", f"/v1/runs/{seg(run_id)}/approvals", body=body)
            break
        except httpx.ConnectError:
            yield Pause(delay)
            delay = _backoff(delay)
    if data.get("decision") == "allow":
        return Allowed(str(data.get("by") or POLICY))
    return Prompt.model_validate(data)


def approval(
    run_id: str,
    tool: str,
    arguments: dict[str, Any] | None,
    *,
    question: str | None,
    expires_in_seconds: int | None,
    timeout: float | None,
    reconnect_delay: float,
    destructive: bool | None = None,
    on_raised: Callable[[Prompt], None] | None = None,
    editable: bool = False,
    input_schema: dict[str, Any] | None = None,
) -> Flow[Approval]:
    """The decision on one tool call: the agent's approval policy (``POST /v1/runs/{run_id}/approvals``)
    allows it outright, or raises an approval prompt that is waited for.

    With ``editable`` (or the tool's rule ``edit``) the person may change the arguments before approving;
    the Approval then carries the edited ones, which the call runs with. Raises PromptCancelled when the
    prompt settles unanswered and PromptUnavailable when it could not be posted: neither is ever a
    denial. ApprovalMismatch when the approval on record was asked about other arguments than these.
    """
    call_arguments = dict(arguments or {})
    body = approval_body(
        tool,
        call_arguments,
        destructive,
        question,
        expires_in_seconds,
        editable=editable,
        input_schema=input_schema,
    )
    raised = yield from approval_decision(run_id, body, reconnect_delay)
    if isinstance(raised, Allowed):
        return Approval(True, raised.by, None, call_arguments)
    if on_raised is not None:
        on_raised(raised)
    prompt = yield from wait_prompt(raised.prompt_id, timeout, reconnect_delay)
    if prompt.prompt_state is not PromptState.ANSWERED or not prompt.answers:
        raise PromptCancelled(prompt)
    allowed = prompt.answers[0].answer == [APPROVE]
    recorded = prompt.tool_call.arguments if prompt.tool_call is not None else None
    if allowed and recorded != call_arguments:
        raise ApprovalMismatch(f"prompt {prompt.prompt_id} approved other arguments than this call's")
    arguments_allowed = approved_arguments(prompt, call_arguments) if allowed else call_arguments
    return Approval(allowed, prompt.answered_by, prompt, arguments_allowed, prompt.note)


def approved_arguments(prompt: Prompt, asked: dict[str, Any]) -> dict[str, Any]:
    """The arguments the person allowed: the edited call's where they edited it, else ``asked``."""
    return dict(prompt.approved_call.arguments) if prompt.approved_call is not None else asked
