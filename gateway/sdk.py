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
  have (``PrivateNotices``, ``EditsMessages``, ``StartsThreads``, ``Mentions``, ``Permalinks``),
  ``ChannelContext``, ``MessageRef``, ``ChannelError``; ``HandOver`` and ``Handed`` hand an event to the
  core with the gateway's one retry rule. The services a channel may ask its context for
  (``context.services``, a ``Services``): ``ThreadLog``, ``Audiences``, ``RateLimiter``,
  ``ProcessState``; ``StreamCaps`` caps the streams a channel serves itself.
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
    "Answer": "gateway.models.prompts",
    "Audiences": "gateway.audience",
    "Channel": "gateway.channel",
    "ChannelContext": "gateway.channel",
    "ChannelError": "gateway.channel",
    "ChannelRuntime": "gateway.channel",
    "ChannelSpec": "gateway.plugins",
    "Check": "gateway.checks",
    "ControlRef": "gateway.control_refs",
    "DONE": "gateway.replies",
    "Draft": "gateway.outcomes",
    "DraftStatus": "gateway.outcomes",
    "EditsMessages": "gateway.channel",
    "FieldError": "gateway.forms",
    "FormField": "gateway.forms",
    "FormView": "gateway.render",
    "GatewayError": "gateway.errors",
    "HandOver": "gateway.channel",
    "Handed": "gateway.channel",
    "InboundMessage": "gateway.models.items",
    "InboundSink": "gateway.channel",
    "Lease": "gateway.lease",
    "LocalChat": "gateway.plugins",
    "MAX_NOTE_CHARS": "gateway.models.base",
    "MAX_TEXT_CHARS": "gateway.models.base",
    "MAX_VALUE_CHARS": "gateway.forms",
    "Marks": "gateway.text_fit",
    "Mentions": "gateway.channel",
    "MessageRef": "gateway.channel",
    "NO": "gateway.forms",
    "Names": "gateway.names",
    "OPERATOR": "gateway.api.auth",
    "Outcome": "gateway.outcomes",
    "PROBE_TIMEOUT_S": "gateway.probes",
    "Permalinks": "gateway.channel",
    "PlatformSettings": "gateway.plugins",
    "PrivateNotices": "gateway.channel",
    "ProcessState": "gateway.channel_services",
    "Prompt": "gateway.models.prompts",
    "PromptKind": "gateway.models.prompts",
    "PromptView": "gateway.render",
    "Question": "gateway.models.prompts",
    "RESTART_HINT": "gateway.sse",
    "RateLimiter": "gateway.ratelimit",
    "Reader": "gateway.audience",
    "Received": "gateway.outcomes",
    "Retry": "gateway.backoff",
    "STREAM_ID_PROBLEM": "gateway.cursors",
    "SchemaError": "gateway.forms",
    "Services": "gateway.channel_services",
    "StartsThreads": "gateway.channel",
    "StepRequest": "gateway.steps",
    "StepResult": "gateway.steps",
    "StreamCaps": "gateway.feeds",
    "ThreadItem": "gateway.models.items",
    "ThreadLog": "gateway.channel_services",
    "ThreadRef": "gateway.ids",
    "TokenTable": "gateway.api.auth",
    "ToolCall": "gateway.models.prompts",
    "Unanswered": "gateway.mapper",
    "VERB_PREFIX": "gateway.control_refs",
    "YES": "gateway.forms",
    "answers_summary": "gateway.render",
    "assets": "gateway.assets#module",
    "cancel_and_wait": "gateway.tasks",
    "channel_spec": "gateway.plugins",
    "check_schema": "gateway.forms",
    "client_address": "gateway.api.client_address",
    "decode": "gateway.control_refs",
    "event": "gateway.logs",
    "event_stream": "gateway.sse",
    "failure": "gateway.logs",
    "form_outcome": "gateway.render",
    "forms": "gateway.forms#module",
    "fresh": "gateway.signed",
    "is_json_media_type": "gateway.jsonbody",
    "is_store_outage": "gateway.channel",
    "is_stream_position": "gateway.cursors",
    "keep_end": "gateway.text_fit",
    "lazy_doctor": "gateway.plugins",
    "lazy_exports": "gateway.plugins",
    "lease_name": "gateway.lease",
    "map_form": "gateway.mapper",
    "notices": "gateway.notices#module",
    "one": "gateway.text_fit",
    "parse_json": "gateway.jsonbody",
    "parse_typed": "gateway.jsonbody",
    "parse_thread_id": "gateway.ids",
    "probe": "gateway.probes",
    "prompt_body": "gateway.render",
    "prompt_text": "gateway.render",
    "redact": "gateway.logs",
    "retry_after": "gateway.backoff",
    "same_text": "gateway.signed",
    "secret_text": "gateway.probes",
    "settled_prompt_item": "gateway.render",
    "shorten": "gateway.render",
    "split_marked": "gateway.text_fit",
    "split_text": "gateway.text_fit",
    "steps": "gateway.steps#module",
    "store_unavailable": "gateway.channel",
    "tool_call_arguments": "gateway.render",
    "unsupported_media_type": "gateway.jsonbody",
    "utf16_len": "gateway.text_fit",
    "utf16_units": "gateway.text_fit",
    "verb_of": "gateway.control_refs",
    "votes_of": "gateway.render",
    "votes_text": "gateway.render",
    "when_set": "gateway.plugins",
}

if TYPE_CHECKING:
    from gateway import assets as assets
    from gateway import forms as forms
    from gateway import notices as notices
    from gateway import steps as steps
    from gateway.api.auth import (
        OPERATOR as OPERATOR,
    )
    from gateway.api.auth import (
        TokenTable as TokenTable,
    )
    from gateway.api.client_address import (
        client_address as client_address,
    )
    from gateway.audience import (
        Audiences as Audiences,
    )
    from gateway.audience import (
        Reader as Reader,
    )
    from gateway.backoff import (
        Retry as Retry,
    )
    from gateway.backoff import (
        retry_after as retry_after,
    )
    from gateway.channel import (
        Channel as Channel,
    )
    from gateway.channel import (
        ChannelContext as ChannelContext,
    )
    from gateway.channel import (
        ChannelError as ChannelError,
    )
    from gateway.channel import (
        ChannelRuntime as ChannelRuntime,
    )
    from gateway.channel import (
        EditsMessages as EditsMessages,
    )
    from gateway.channel import (
        Handed as Handed,
    )
    from gateway.channel import (
        HandOver as HandOver,
    )
    from gateway.channel import (
        InboundSink as InboundSink,
    )
    from gateway.channel import (
        Mentions as Mentions,
    )
    from gateway.channel import (
        MessageRef as MessageRef,
    )
    from gateway.channel import (
        Permalinks as Permalinks,
    )
    from gateway.channel import (
        PrivateNotices as PrivateNotices,
    )
    from gateway.channel import (
        StartsThreads as StartsThreads,
    )
    from gateway.channel import (
        is_store_outage as is_store_outage,
    )
    from gateway.channel import (
        store_unavailable as store_unavailable,
    )
    from gateway.channel_services import (
        ProcessState as ProcessState,
    )
    from gateway.channel_services import (
        Services as Services,
    )
    from gateway.channel_services import (
        ThreadLog as ThreadLog,
    )
    from gateway.checks import (
        Check as Check,
    )
    from gateway.control_refs import (
        VERB_PREFIX as VERB_PREFIX,
    )
    from gateway.control_refs import (
        ControlRef as ControlRef,
    )
    from gateway.control_refs import (
        decode as decode,
    )
    from gateway.control_refs import (
        verb_of as verb_of,
    )
    from gateway.cursors import (
        STREAM_ID_PROBLEM as STREAM_ID_PROBLEM,
    )
    from gateway.cursors import (
        is_stream_position as is_stream_position,
    )
    from gateway.errors import (
        GatewayError as GatewayError,
    )
    from gateway.feeds import (
        StreamCaps as StreamCaps,
    )
    from gateway.forms import (
        MAX_VALUE_CHARS as MAX_VALUE_CHARS,
    )
    from gateway.forms import (
        NO as NO,
    )
    from gateway.forms import (
        YES as YES,
    )
    from gateway.forms import (
        FieldError as FieldError,
    )
    from gateway.forms import (
        FormField as FormField,
    )
    from gateway.forms import (
        SchemaError as SchemaError,
    )
    from gateway.forms import (
        check_schema as check_schema,
    )
    from gateway.ids import (
        ThreadRef as ThreadRef,
    )
    from gateway.ids import (
        parse_thread_id as parse_thread_id,
    )
    from gateway.jsonbody import (
        is_json_media_type as is_json_media_type,
    )
    from gateway.jsonbody import (
        parse_json as parse_json,
    )
    from gateway.jsonbody import (
        parse_typed as parse_typed,
    )
    from gateway.jsonbody import (
        unsupported_media_type as unsupported_media_type,
    )
    from gateway.lease import (
        Lease as Lease,
    )
    from gateway.lease import (
        lease_name as lease_name,
    )
    from gateway.logs import (
        event as event,
    )
    from gateway.logs import (
        failure as failure,
    )
    from gateway.logs import (
        redact as redact,
    )
    from gateway.mapper import (
        Unanswered as Unanswered,
    )
    from gateway.mapper import (
        map_form as map_form,
    )
    from gateway.models.base import (
        MAX_NOTE_CHARS as MAX_NOTE_CHARS,
    )
    from gateway.models.base import (
        MAX_TEXT_CHARS as MAX_TEXT_CHARS,
    )
    from gateway.models.items import (
        InboundMessage as InboundMessage,
    )
    from gateway.models.items import (
        ThreadItem as ThreadItem,
    )
    from gateway.models.prompts import (
        Answer as Answer,
    )
    from gateway.models.prompts import (
        Prompt as Prompt,
    )
    from gateway.models.prompts import (
        PromptKind as PromptKind,
    )
    from gateway.models.prompts import (
        Question as Question,
    )
    from gateway.models.prompts import (
        ToolCall as ToolCall,
    )
    from gateway.names import (
        Names as Names,
    )
    from gateway.outcomes import (
        Draft as Draft,
    )
    from gateway.outcomes import (
        DraftStatus as DraftStatus,
    )
    from gateway.outcomes import (
        Outcome as Outcome,
    )
    from gateway.outcomes import (
        Received as Received,
    )
    from gateway.plugins import (
        ChannelSpec as ChannelSpec,
    )
    from gateway.plugins import (
        LocalChat as LocalChat,
    )
    from gateway.plugins import (
        PlatformSettings as PlatformSettings,
    )
    from gateway.plugins import (
        channel_spec as channel_spec,
    )
    from gateway.plugins import (
        lazy_doctor as lazy_doctor,
    )
    from gateway.plugins import (
        lazy_exports as lazy_exports,
    )
    from gateway.plugins import (
        when_set as when_set,
    )
    from gateway.probes import (
        PROBE_TIMEOUT_S as PROBE_TIMEOUT_S,
    )
    from gateway.probes import (
        probe as probe,
    )
    from gateway.probes import (
        secret_text as secret_text,
    )
    from gateway.ratelimit import (
        RateLimiter as RateLimiter,
    )
    from gateway.render import (
        FormView as FormView,
    )
    from gateway.render import (
        PromptView as PromptView,
    )
    from gateway.render import (
        answers_summary as answers_summary,
    )
    from gateway.render import (
        form_outcome as form_outcome,
    )
    from gateway.render import (
        prompt_body as prompt_body,
    )
    from gateway.render import (
        prompt_text as prompt_text,
    )
    from gateway.render import (
        settled_prompt_item as settled_prompt_item,
    )
    from gateway.render import (
        shorten as shorten,
    )
    from gateway.render import (
        tool_call_arguments as tool_call_arguments,
    )
    from gateway.render import (
        votes_of as votes_of,
    )
    from gateway.render import (
        votes_text as votes_text,
    )
    from gateway.replies import (
        DONE as DONE,
    )
    from gateway.signed import (
        fresh as fresh,
    )
    from gateway.signed import (
        same_text as same_text,
    )
    from gateway.sse import (
        RESTART_HINT as RESTART_HINT,
    )
    from gateway.sse import (
        event_stream as event_stream,
    )
    from gateway.steps import (
        StepRequest as StepRequest,
    )
    from gateway.steps import (
        StepResult as StepResult,
    )
    from gateway.tasks import (
        cancel_and_wait as cancel_and_wait,
    )
    from gateway.text_fit import (
        Marks as Marks,
    )
    from gateway.text_fit import (
        keep_end as keep_end,
    )
    from gateway.text_fit import (
        one as one,
    )
    from gateway.text_fit import (
        split_marked as split_marked,
    )
    from gateway.text_fit import (
        split_text as split_text,
    )
    from gateway.text_fit import (
        utf16_len as utf16_len,
    )
    from gateway.text_fit import (
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
