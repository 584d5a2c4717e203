"""A prompt's stored form: its immutable record (JSON) plus the hash fields that say how it settled."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import TypeAdapter

from gateway.base.models import Answer, Prompt, PromptState, ReasonCode, Resolution, ToolCall, Vote, from_ms
from gateway.store.escalations import taken
from gateway.store.lru import LRU

# A settled prompt's answers and votes, validated from their JSON in one step each (pydantic's C parser).
_ANSWERS = TypeAdapter(list[Answer])
_VOTES = TypeAdapter(list[Vote])

RECORDS_KEPT = 2048  # parsed records a codec keeps (about 6 KB each for a typical two-question prompt)


def prompt_record(prompt: Prompt) -> str:
    """The immutable record stored for a prompt: its JSON without the values the model would fill in
    anyway (defaults, such as the pending state and ``multiSelect: false``), which keeps a typical
    record inside a smaller Redis allocation."""
    return prompt.model_dump_json(exclude_defaults=True)


def with_settlement(prompt: Prompt, fields: dict[str, str]) -> Prompt:
    """``prompt`` (as asked) with how it settled, from its hash's fields; itself while still pending."""
    state = PromptState(fields.get("state", "pending"))
    update: dict[str, Any] = {}
    if fields.get("votes"):
        update["votes"] = _VOTES.validate_json(fields["votes"])
    if state is PromptState.PENDING:
        if fields.get("claimed_by") and fields.get("claimed_until"):  # a lapsed claim is not read back
            update["claimed_by"] = fields["claimed_by"]
            update["claimed_until"] = from_ms(fields["claimed_until"])
        return prompt.model_copy(update=update) if update else prompt
    update["prompt_state"] = state
    if fields.get("note"):
        update["note"] = fields["note"]
    if state is PromptState.ANSWERED:
        update["answers"] = _ANSWERS.validate_json(fields["answers"])
        update["answered_by"] = fields.get("answered_by") or None
        update["person"] = fields.get("person") or None
        update["asserted_by"] = fields.get("asserted_by") or None
        update["resolution"] = Resolution(fields["resolution"]) if fields.get("resolution") else None
        update["turn_id"] = fields.get("turn_id") or None
        if fields.get("content"):
            update["content"] = json.loads(fields["content"])
        if fields.get("approved_call"):
            update["approved_call"] = ToolCall.model_validate_json(fields["approved_call"])
        if fields.get("granted"):  # the grant its approve made, kept whole: its pattern is what is shown
            update["granted"] = ToolCall.model_validate(json.loads(fields["granted"])["match"])
    elif state is PromptState.CANCELLED:
        update["reason"] = fields.get("reason")
        update["reason_code"] = ReasonCode(fields["reason_code"]) if fields.get("reason_code") else None
    if fields.get("settled_at"):
        update["settled_at"] = from_ms(fields["settled_at"])
    return prompt.model_copy(update=update)


class RecordCodec:
    """Turns stored records back into prompts. A record never changes once written, so each is validated
    once and kept (bounded), not parsed on every read of the prompt (the outbox, a waiter, a reply)."""

    def __init__(self, size: int = RECORDS_KEPT) -> None:
        self._records: LRU[Prompt] = LRU(size)

    def encode(self, prompt: Prompt) -> str:
        """The record to store for ``prompt`` (pending), remembered so reading it back parses nothing."""
        record = prompt_record(prompt)
        self._records.put(_digest(record), prompt)
        return record

    def pending(self, record: str) -> Prompt:
        """The prompt as asked (pending), from its stored record."""
        key = _digest(record)
        prompt = self._records.get(key)
        if prompt is None:
            prompt = Prompt.model_validate_json(record)
            self._records.put(key, prompt)
        return prompt

    def __len__(self) -> int:
        return len(self._records)

    def decode(self, fields: dict[str, str]) -> Prompt:
        """A prompt from its hash's fields and its record (``rec``): the record plus how it settled, and
        the escalation steps it took (``esc``)."""
        prompt = with_settlement(self.pending(fields["rec"]), fields)
        if fields.get("esc"):
            prompt = prompt.model_copy(update={"escalations": taken(prompt, fields["esc"]) or None})
        return prompt


def _digest(record: str) -> str:
    """A record's key in the cache: its digest, not the record (a kilobyte or more) kept a second time."""
    return hashlib.blake2b(record.encode(), digest_size=16).hexdigest()
