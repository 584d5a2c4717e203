"""The agent's side of the core: runs, prompts raised (and approvals asked by policy), agent messages."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from gateway.base import metrics
from gateway.base.errors import GatewayError, not_found
from gateway.base.ids import new_id, parse_thread_id
from gateway.base.logs import event
from gateway.base.models import (
    Prompt,
    PromptKind,
    PromptRequest,
    Question,
    ReasonCode,
    Run,
    RunRequest,
    RunState,
    ToolAnnotations,
    ToolCall,
    ToolRule,
    from_ms,
)
from gateway.decision.escalation import check_owners, check_targets
from gateway.decision.granting import granted
from gateway.decision.history import grant_use_entry
from gateway.decision.service_base import ServiceBase
from gateway.delivery.channel import ChannelError
from gateway.rules.approval_policy import needs_approval, tool_rule
from gateway.rules.grants import Grant
from gateway.rules.render import message_item, pending_prompt_item
from gateway.store.results import OpenStatus

RUN_ENDED_REASON = "the run ended"
ABORTED_REASON = "the run was aborted"
SUPERSEDED_REASON = "a newer prompt in this thread replaced it"


def _open(run: Run | None, run_id: str) -> Run:
    """The run to ask in: RUN_NOT_FOUND when there is none, RUN_ENDED once it has ended."""
    if run is None:
        raise not_found("RUN_NOT_FOUND", "run", run_id)
    if run.state is RunState.ENDED:
        raise _ended(run_id)
    return run


def _ended(run_id: str) -> GatewayError:
    return GatewayError("RUN_ENDED", f"Run {run_id} has ended; start a new run to ask.", 409)


def unavailable_message(kind: PromptKind, detail: str) -> str:
    """Never a denial: the question was not asked."""
    noun = "Approval" if kind is PromptKind.APPROVAL else "Question"
    return f"{noun} unavailable: the prompt could not be posted to the chat ({detail})."


class Raising(ServiceBase):
    """Start and end runs; raise a prompt and post it; ask for an approval when the policy says so; queue
    the agent's messages for the chat."""

    # Runs ------------------------------------------------------------------------------------------

    async def create_run(self, request: RunRequest) -> Run:
        thread = parse_thread_id(request.thread_id)
        self.channels.for_thread(thread)
        run = Run(
            run_id=new_id("run"),
            thread_id=thread.thread_id,
            agent=request.agent,
            started_by=request.started_by,
            created_at=from_ms(self.now_ms()),
        )
        await self.store.create_run(run)
        return run

    async def get_run(self, run_id: str) -> Run:
        run = await self.store.get_run(run_id)
        if run is None:
            raise not_found("RUN_NOT_FOUND", "run", run_id)
        return run

    async def end_run(self, run_id: str, *, aborted: bool = False) -> Run:
        """End a run; its pending prompt is cancelled with reason ``the run ended`` (or, aborted, with
        ``the run was aborted`` and reason_code ``aborted``)."""
        run = await self.get_run(run_id)
        code = ReasonCode.ABORTED if aborted else ReasonCode.RUN_ENDED
        reason = ABORTED_REASON if aborted else RUN_ENDED_REASON
        found, cancelled = await self.store.end_run(run.thread_id, run_id, reason, self.now_ms(), code)
        if not found:
            raise not_found("RUN_NOT_FOUND", "run", run_id)
        self.outbox.kick(run.thread_id)
        if cancelled:
            event(
                "prompt.cancelled",
                prompt_id=cancelled,
                thread_id=run.thread_id,
                run_id=run_id,
                reason_code=code.value,
            )
        return run.model_copy(update={"state": RunState.ENDED})

    # Prompts ---------------------------------------------------------------------------------------

    async def raise_prompt(self, run_id: str, request: PromptRequest) -> Prompt:
        """Record the prompt (superseding the thread's active one), then post it to the chat.

        If the post fails the prompt is cancelled and PROMPT_UNAVAILABLE is raised: never a denial.
        """
        # A run this process knows is not read again: the open script checks that it is still running.
        run = _open(await self.store.get_run(run_id, state_may_be_stale=True), run_id)
        thread = parse_thread_id(run.thread_id)
        channel = self.channels.for_thread(thread)
        check_targets(self.channels, request.escalation)
        await check_owners(self.store, self.channels, run.agent, request.escalation)
        now_ms = self.now_ms()
        settings = await self.store.human_input(run.agent)
        expires_in = request.expires_in_seconds or settings.expires_in_seconds
        escalation = settings.escalation if request.escalation is None else request.escalation
        assert request.questions is not None  # every kind has them once validated (forms derive theirs)
        prompt = Prompt(
            prompt_id=new_id("prm"),
            run_id=run.run_id,
            thread_id=run.thread_id,
            agent=run.agent,
            kind=request.kind,
            message=request.message,
            requested_schema=request.requested_schema,
            url=request.url,
            questions=request.questions,
            tool_call=request.tool_call,
            created_at=from_ms(now_ms),
            expires_at=from_ms(now_ms) + timedelta(seconds=expires_in),
            started_by=run.started_by,
            on_unmatched_reply=settings.on_unmatched_reply,
            editable=request.editable,
            input_schema=request.input_schema,
            approvals=request.approvals,
            starter_counts=request.starter_counts,
            escalation=escalation or None,
        )
        status, superseded = await self.store.open_prompt(prompt, SUPERSEDED_REASON, now_ms)
        if status is OpenStatus.NO_RUN:
            raise not_found("RUN_NOT_FOUND", "run", run_id)
        if status is OpenStatus.RUN_ENDED:
            raise _ended(run_id)
        if superseded:
            event(
                "prompt.superseded",
                prompt_id=superseded,
                by=prompt.prompt_id,
                thread_id=prompt.thread_id,
                run_id=run_id,
            )
        if superseded or self.outbox.busy(prompt.thread_id):
            # What this process already owes the thread (a superseded prompt's audit item, an agent
            # message) goes out before the new prompt.
            await self.outbox.flush(prompt.thread_id)
        item = pending_prompt_item(prompt)
        try:
            ref = await channel.post(thread, item)
        except ChannelError as exc:
            detail = str(exc) or type(exc).__name__
            metrics.platform_error(prompt.thread_id, exc)
            await self.store.cancel(
                prompt.thread_id,
                prompt.prompt_id,
                unavailable_message(prompt.kind, detail),
                ReasonCode.CANCELLED,
                self.now_ms(),
                audit=False,
            )
            self.outbox.kick(prompt.thread_id)
            event(
                "prompt.unavailable",
                logging.WARNING,
                prompt_id=prompt.prompt_id,
                thread_id=prompt.thread_id,
                run_id=run_id,
                error=detail,
            )
            raise GatewayError(
                "PROMPT_UNAVAILABLE",
                unavailable_message(prompt.kind, detail),
                503,
                {"prompt_id": prompt.prompt_id},
            ) from exc
        await self.store.record_post(
            prompt.thread_id,
            prompt.prompt_id,
            ref.message_id,
            {"role": "gateway", **item.model_dump(mode="json")},
        )
        self.outbox.kick(prompt.thread_id)
        event(
            "prompt.raised",
            prompt_id=prompt.prompt_id,
            thread_id=prompt.thread_id,
            run_id=run_id,
            kind=prompt.kind.value,
        )
        return prompt

    async def policy_asks(
        self,
        agent: str,
        tool_call: ToolCall,
        destructive: bool | None = None,
        annotations: ToolAnnotations | None = None,
    ) -> bool:
        """Whether ``agent``'s approval policy has a person approve ``tool_call`` first (no run needed)."""
        return needs_approval(await self.store.approval_policy(agent), tool_call, destructive, annotations)

    async def request_approval(
        self,
        run_id: str,
        tool_call: ToolCall,
        destructive: bool | None = None,
        question: str | None = None,
        expires_in_seconds: int | None = None,
        annotations: ToolAnnotations | None = None,
        *,
        editable: bool = False,
        input_schema: dict[str, Any] | None = None,
    ) -> Prompt | Grant | None:
        """A tool call about to be made: the run's grant that lets it through (its use counted; never for a
        call the tool's rule puts to several approvers), else the agent's approval policy: None when it asks
        nobody, else the approval raised.

        The tool's rule may let the person edit the call and ask for several approvers; ``editable`` asks
        for edits whatever the rule says."""
        run = _open(await self.store.get_run(run_id), run_id)
        policy = await self.store.approval_policy(run.agent)
        rule = tool_rule(policy, tool_call.name) or ToolRule()
        # A call its rule puts to several approvers is asked every time: no one person's grant answers it.
        grant = await granted(self.store, run, tool_call) if rule.approvals < 2 else None
        if grant is not None:
            await self.store.publish([grant_use_entry(run, grant, tool_call, self.now_ms())], [])
            return grant
        if not needs_approval(policy, tool_call, destructive, annotations):
            event("approval.by_policy", run_id=run_id, tool=tool_call.name)
            return None
        request = PromptRequest(
            kind=PromptKind.APPROVAL,
            questions=[Question(question=question or f"Allow {tool_call.name} to run?")],
            tool_call=tool_call,
            expires_in_seconds=expires_in_seconds,
            editable=editable or rule.edit,
            input_schema=input_schema,
            approvals=rule.approvals,
            starter_counts=rule.starter_counts,
        )
        return await self.raise_prompt(run_id, request)

    async def post_message(self, thread_id: str, text: str) -> dict[str, Any]:
        """Queue an agent message for the chat (posted in order with audit items, retried on failure)."""
        thread = parse_thread_id(thread_id)
        self.channels.for_thread(thread)
        item = message_item(text)
        effect = {"t": "message", "id": new_id("itm"), "item": item.model_dump(mode="json")}
        await self.store.push_chat(thread.thread_id, effect, self.now_ms())
        self.outbox.kick(thread.thread_id)
        return {"item_id": effect["id"], "thread_id": thread.thread_id, **item.model_dump(mode="json")}
