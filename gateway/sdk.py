"""The channel SDK: the one import surface for chat platform packages, shipped or third-party.

A platform package (``channels/<platform>/`` here, or a package of its own installed beside Threadgate)
imports ``gateway.sdk`` and nothing else of ``gateway``; every other module of the core is internal and
may change between releases (as pytest keeps ``_pytest`` behind ``pytest``). The names below are the
plugin API, versioned by ``SDK_VERSION``: a release that removes or changes one raises it. The guide is
docs/channels/plugins.md.

What is here, by what a channel does with it:

- **Describe the platform** (its spec, found through the ``threadgate.channels`` entry points):
  ``ChannelSpec``, ``channel_spec``, ``PlatformSettings``, ``when_set``, ``lazy_doctor``,
  ``lazy_exports``, ``Check``, ``probe``, ``PROBE_TIMEOUT_S``, ``secret_text``.
- **Be a channel**: the ``Channel`` / ``ChannelRuntime`` protocols and the capabilities a platform may
  have (``PrivateNotices``, ``EditsMessages``, ``StartsThreads``, ``Mentions``, ``Permalinks``,
  ``DirectMessages``),
  ``ChannelContext``, ``MessageRef``, ``ChannelError``; ``HandOver`` and ``Handed`` hand an event to the
  core with the gateway's one retry rule. The services a channel may ask its context for
  (``context.services``, a ``Services``): ``ThreadLog``, ``Audiences``, ``RateLimiter``,
  ``ProcessState``, ``SignedInPeople`` (who a session cookie is, and their messages as that person, with
  ``SignedIn`` the person); ``StreamCaps`` caps the streams a channel serves itself.
- **Run in ``threadgate demo``**: ``LocalChat``, for a platform that needs no outside service.
- **Hand people's input to the core**: ``InboundSink`` (``receive`` a typed ``InboundMessage``, ``step``
  a decoded press, form or reply: one act of ``steps``, such as ``steps.Pick``) and what it answers
  (``Outcome``, ``StepRequest``, ``StepResult``).
- **Read and render what the core posts**: ``ThreadItem``, ``Prompt``, ``Question``, ``Answer``,
  ``ToolCall``, ``PromptKind``, the renderers (``prompt_text``, ``settled_prompt_item``, …), the text
  of every notice (``notices``), forms (``forms``, ``FormField``, …), control references and ids.
- **Fit the platform's limits**: text fitting (``split_text``, ``utf16_len``, …), the size limits
  (``MAX_TEXT_CHARS``, ``MAX_NOTE_CHARS``).
- **Behave like the rest of the gateway**: structured log events (``event``, ``failure``, ``redact``),
  ``GatewayError``, ``store_unavailable``, backoff (``Retry``, ``retry_after``), leases.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

SDK_VERSION = 1
"""Raised when a name here is removed or changes meaning; added names keep the version."""

# Where each name lives. Loaded on first use, so a platform's light spec module that imports the SDK
# loads only what it names (every ``threadgate`` command reads the specs).
_WHERE: dict[str, str] = {
    "Answer": "gateway.base.models.prompts",
    "Audiences": "gateway.rules.audience",
    "Channel": "gateway.delivery.channel",
    "ChannelContext": "gateway.delivery.channel",
    "ChannelError": "gateway.delivery.channel",
    "ChannelRuntime": "gateway.delivery.channel",
    "ChannelSpec": "gateway.delivery.plugins",
    "Check": "gateway.base.checks",
    "ControlRef": "gateway.rules.control_refs",
    "DONE": "gateway.rules.replies",
    "DirectMessages": "gateway.delivery.channel",
    "Draft": "gateway.rules.outcomes",
    "DraftStatus": "gateway.rules.outcomes",
    "EditsMessages": "gateway.delivery.channel",
    "FieldError": "gateway.base.forms",
    "FormField": "gateway.base.forms",
    "FormView": "gateway.rules.render",
    "GatewayError": "gateway.base.errors",
    "HandOver": "gateway.delivery.channel",
    "Handed": "gateway.delivery.channel",
    "InboundMessage": "gateway.base.models.items",
    "InboundSink": "gateway.delivery.channel",
    "Lease": "gateway.delivery.lease",
    "LocalChat": "gateway.delivery.plugins",
    "MAX_NOTE_CHARS": "gateway.base.models.base",
    "MAX_TEXT_CHARS": "gateway.base.models.base",
    "MAX_VALUE_CHARS": "gateway.base.forms",
    "Marks": "gateway.rules.text_fit",
    "Mentions": "gateway.delivery.channel",
    "MessageRef": "gateway.delivery.channel",
    "NO": "gateway.base.forms",
    "Names": "gateway.base.names",
    "OPERATOR": "gateway.api.auth",
    "Outcome": "gateway.rules.outcomes",
    "PROBE_TIMEOUT_S": "gateway.process.probes",
    "Permalinks": "gateway.delivery.channel",
    "PlatformSettings": "gateway.delivery.plugins",
    "PrivateNotices": "gateway.delivery.channel",
    "ProcessState": "gateway.delivery.channel_services",
    "Prompt": "gateway.base.models.prompts",
    "PromptKind": "gateway.base.models.prompts",
    "PromptView": "gateway.rules.render",
    "Question": "gateway.base.models.prompts",
    "RESTART_HINT": "gateway.delivery.sse",
    "RateLimiter": "gateway.base.ratelimit",
    "Reader": "gateway.rules.audience",
    "Received": "gateway.rules.outcomes",
    "Retry": "gateway.base.backoff",
    "STREAM_ID_PROBLEM": "gateway.base.cursors",
    "SchemaError": "gateway.base.forms",
    "Services": "gateway.delivery.channel_services",
    "SignedIn": "gateway.people.signin",
    "SignedInPeople": "gateway.delivery.channel_services",
    "StartsThreads": "gateway.delivery.channel",
    "StepRequest": "gateway.rules.steps",
    "StepResult": "gateway.rules.steps",
    "StreamCaps": "gateway.delivery.feeds",
    "ThreadItem": "gateway.base.models.items",
    "ThreadLog": "gateway.delivery.channel_services",
    "ThreadRef": "gateway.base.ids",
    "TokenTable": "gateway.api.auth",
    "ToolCall": "gateway.base.models.prompts",
    "Unanswered": "gateway.rules.mapper",
    "VERB_PREFIX": "gateway.rules.control_refs",
    "YES": "gateway.base.forms",
    "answers_summary": "gateway.rules.render",
    "assets": "gateway.api.assets#module",
    "cancel_and_wait": "gateway.base.tasks",
    "channel_spec": "gateway.delivery.plugins",
    "check_schema": "gateway.base.forms",
    "client_address": "gateway.api.client_address",
    "decode": "gateway.rules.control_refs",
    "event": "gateway.base.logs",
    "event_stream": "gateway.delivery.sse",
    "failure": "gateway.base.logs",
    "form_outcome": "gateway.rules.render",
    "forms": "gateway.base.forms#module",
    "fresh": "gateway.base.signed",
    "is_json_media_type": "gateway.base.jsonbody",
    "is_destructive": "gateway.rules.approval_policy",
    "is_store_outage": "gateway.delivery.channel",
    "is_stream_position": "gateway.base.cursors",
    "keep_end": "gateway.rules.text_fit",
    "lazy_doctor": "gateway.delivery.plugins",
    "lazy_exports": "gateway.delivery.plugins",
    "lease_name": "gateway.delivery.lease",
    "map_form": "gateway.rules.mapper",
    "notices": "gateway.rules.notices#module",
    "one": "gateway.rules.text_fit",
    "parse_json": "gateway.base.jsonbody",
    "parse_typed": "gateway.base.jsonbody",
    "parse_thread_id": "gateway.base.ids",
    "probe": "gateway.process.probes",
    "prompt_body": "gateway.rules.render",
    "prompt_text": "gateway.rules.render",
    "redact": "gateway.base.logs",
    "retry_after": "gateway.base.backoff",
    "same_text": "gateway.base.signed",
    "secret_text": "gateway.process.probes",
    "settled_prompt_item": "gateway.rules.render",
    "shorten": "gateway.rules.render",
    "split_marked": "gateway.rules.text_fit",
    "split_text": "gateway.rules.text_fit",
    "steps": "gateway.rules.steps#module",
    "store_unavailable": "gateway.delivery.channel",
    "tool_call_arguments": "gateway.rules.render",
    "unsupported_media_type": "gateway.base.jsonbody",
    "utf16_len": "gateway.rules.text_fit",
    "utf16_units": "gateway.rules.text_fit",
    "verb_of": "gateway.rules.control_refs",
    "votes_of": "gateway.rules.render",
    "votes_text": "gateway.rules.render",
    "when_set": "gateway.delivery.plugins",
}

if TYPE_CHECKING:
    from gateway.api import assets as assets
    from gateway.api.auth import (
        OPERATOR as OPERATOR,
    )
    from gateway.api.auth import (
        TokenTable as TokenTable,
    )
    from gateway.api.client_address import (
        client_address as client_address,
    )
    from gateway.base import forms as forms
    from gateway.base.backoff import (
        Retry as Retry,
    )
    from gateway.base.backoff import (
        retry_after as retry_after,
    )
    from gateway.base.checks import (
        Check as Check,
    )
    from gateway.base.cursors import (
        STREAM_ID_PROBLEM as STREAM_ID_PROBLEM,
    )
    from gateway.base.cursors import (
        is_stream_position as is_stream_position,
    )
    from gateway.base.errors import (
        GatewayError as GatewayError,
    )
    from gateway.base.forms import (
        MAX_VALUE_CHARS as MAX_VALUE_CHARS,
    )
    from gateway.base.forms import (
        NO as NO,
    )
    from gateway.base.forms import (
        YES as YES,
    )
    from gateway.base.forms import (
        FieldError as FieldError,
    )
    from gateway.base.forms import (
        FormField as FormField,
    )
    from gateway.base.forms import (
        SchemaError as SchemaError,
    )
    from gateway.base.forms import (
        check_schema as check_schema,
    )
    from gateway.base.ids import (
        ThreadRef as ThreadRef,
    )
    from gateway.base.ids import (
        parse_thread_id as parse_thread_id,
    )
    from gateway.base.jsonbody import (
        is_json_media_type as is_json_media_type,
    )
    from gateway.base.jsonbody import (
        parse_json as parse_json,
    )
    from gateway.base.jsonbody import (
        parse_typed as parse_typed,
    )
    from gateway.base.jsonbody import (
        unsupported_media_type as unsupported_media_type,
    )
    from gateway.base.logs import (
        event as event,
    )
    from gateway.base.logs import (
        failure as failure,
    )
    from gateway.base.logs import (
        redact as redact,
    )
    from gateway.base.models.base import (
        MAX_NOTE_CHARS as MAX_NOTE_CHARS,
    )
    from gateway.base.models.base import (
        MAX_TEXT_CHARS as MAX_TEXT_CHARS,
    )
    from gateway.base.models.items import (
        InboundMessage as InboundMessage,
    )
    from gateway.base.models.items import (
        ThreadItem as ThreadItem,
    )
    from gateway.base.models.prompts import (
        Answer as Answer,
    )
    from gateway.base.models.prompts import (
        Prompt as Prompt,
    )
    from gateway.base.models.prompts import (
        PromptKind as PromptKind,
    )
    from gateway.base.models.prompts import (
        Question as Question,
    )
    from gateway.base.models.prompts import (
        ToolCall as ToolCall,
    )
    from gateway.base.names import (
        Names as Names,
    )
    from gateway.base.ratelimit import (
        RateLimiter as RateLimiter,
    )
    from gateway.base.signed import (
        fresh as fresh,
    )
    from gateway.base.signed import (
        same_text as same_text,
    )
    from gateway.base.tasks import (
        cancel_and_wait as cancel_and_wait,
    )
    from gateway.delivery.channel import (
        Channel as Channel,
    )
    from gateway.delivery.channel import (
        ChannelContext as ChannelContext,
    )
    from gateway.delivery.channel import (
        ChannelError as ChannelError,
    )
    from gateway.delivery.channel import (
        ChannelRuntime as ChannelRuntime,
    )
    from gateway.delivery.channel import (
        DirectMessages as DirectMessages,
    )
    from gateway.delivery.channel import (
        EditsMessages as EditsMessages,
    )
    from gateway.delivery.channel import (
        Handed as Handed,
    )
    from gateway.delivery.channel import (
        HandOver as HandOver,
    )
    from gateway.delivery.channel import (
        InboundSink as InboundSink,
    )
    from gateway.delivery.channel import (
        Mentions as Mentions,
    )
    from gateway.delivery.channel import (
        MessageRef as MessageRef,
    )
    from gateway.delivery.channel import (
        Permalinks as Permalinks,
    )
    from gateway.delivery.channel import (
        PrivateNotices as PrivateNotices,
    )
    from gateway.delivery.channel import (
        StartsThreads as StartsThreads,
    )
    from gateway.delivery.channel import (
        is_store_outage as is_store_outage,
    )
    from gateway.delivery.channel import (
        store_unavailable as store_unavailable,
    )
    from gateway.delivery.channel_services import (
        ProcessState as ProcessState,
    )
    from gateway.delivery.channel_services import (
        Services as Services,
    )
    from gateway.delivery.channel_services import (
        SignedInPeople as SignedInPeople,
    )
    from gateway.delivery.channel_services import (
        ThreadLog as ThreadLog,
    )
    from gateway.delivery.feeds import (
        StreamCaps as StreamCaps,
    )
    from gateway.delivery.lease import (
        Lease as Lease,
    )
    from gateway.delivery.lease import (
        lease_name as lease_name,
    )
    from gateway.delivery.plugins import (
        ChannelSpec as ChannelSpec,
    )
    from gateway.delivery.plugins import (
        LocalChat as LocalChat,
    )
    from gateway.delivery.plugins import (
        PlatformSettings as PlatformSettings,
    )
    from gateway.delivery.plugins import (
        channel_spec as channel_spec,
    )
    from gateway.delivery.plugins import (
        lazy_doctor as lazy_doctor,
    )
    from gateway.delivery.plugins import (
        lazy_exports as lazy_exports,
    )
    from gateway.delivery.plugins import (
        when_set as when_set,
    )
    from gateway.delivery.sse import (
        RESTART_HINT as RESTART_HINT,
    )
    from gateway.delivery.sse import (
        event_stream as event_stream,
    )
    from gateway.people.signin import (
        SignedIn as SignedIn,
    )
    from gateway.process.probes import (
        PROBE_TIMEOUT_S as PROBE_TIMEOUT_S,
    )
    from gateway.process.probes import (
        probe as probe,
    )
    from gateway.process.probes import (
        secret_text as secret_text,
    )
    from gateway.rules import notices as notices
    from gateway.rules import steps as steps
    from gateway.rules.approval_policy import (
        is_destructive as is_destructive,
    )
    from gateway.rules.audience import (
        Audiences as Audiences,
    )
    from gateway.rules.audience import (
        Reader as Reader,
    )
    from gateway.rules.control_refs import (
        VERB_PREFIX as VERB_PREFIX,
    )
    from gateway.rules.control_refs import (
        ControlRef as ControlRef,
    )
    from gateway.rules.control_refs import (
        decode as decode,
    )
    from gateway.rules.control_refs import (
        verb_of as verb_of,
    )
    from gateway.rules.mapper import (
        Unanswered as Unanswered,
    )
    from gateway.rules.mapper import (
        map_form as map_form,
    )
    from gateway.rules.outcomes import (
        Draft as Draft,
    )
    from gateway.rules.outcomes import (
        DraftStatus as DraftStatus,
    )
    from gateway.rules.outcomes import (
        Outcome as Outcome,
    )
    from gateway.rules.outcomes import (
        Received as Received,
    )
    from gateway.rules.render import (
        FormView as FormView,
    )
    from gateway.rules.render import (
        PromptView as PromptView,
    )
    from gateway.rules.render import (
        answers_summary as answers_summary,
    )
    from gateway.rules.render import (
        form_outcome as form_outcome,
    )
    from gateway.rules.render import (
        prompt_body as prompt_body,
    )
    from gateway.rules.render import (
        prompt_text as prompt_text,
    )
    from gateway.rules.render import (
        settled_prompt_item as settled_prompt_item,
    )
    from gateway.rules.render import (
        shorten as shorten,
    )
    from gateway.rules.render import (
        tool_call_arguments as tool_call_arguments,
    )
    from gateway.rules.render import (
        votes_of as votes_of,
    )
    from gateway.rules.render import (
        votes_text as votes_text,
    )
    from gateway.rules.replies import (
        DONE as DONE,
    )
    from gateway.rules.steps import (
        StepRequest as StepRequest,
    )
    from gateway.rules.steps import (
        StepResult as StepResult,
    )
    from gateway.rules.text_fit import (
        Marks as Marks,
    )
    from gateway.rules.text_fit import (
        keep_end as keep_end,
    )
    from gateway.rules.text_fit import (
        one as one,
    )
    from gateway.rules.text_fit import (
        split_marked as split_marked,
    )
    from gateway.rules.text_fit import (
        split_text as split_text,
    )
    from gateway.rules.text_fit import (
        utf16_len as utf16_len,
    )
    from gateway.rules.text_fit import (
        utf16_units as utf16_units,
    )


def __getattr__(name: str) -> Any:
    """Import a name of the SDK from its module on first use (PEP 562)."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if module.endswith("#module"):
        value = import_module(module.removesuffix("#module"))
    else:
        value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])


__all__ = ["SDK_VERSION", *sorted(_WHERE)]
