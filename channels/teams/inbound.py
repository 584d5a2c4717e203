"""Teams activities as the core's InboundMessage: which count, their thread, sender and text. Pure."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from microsoft_teams.api.activities.message import MessageActivity
from microsoft_teams.api.models import ConversationAccount
from microsoft_teams.api.models.entity import MentionEntity

from channels.teams.threads import person_for, thread_id_for
from gateway.sdk import MAX_TEXT_CHARS, InboundMessage

_TAGS = re.compile(r"<[^<>]{0,200}>")


@dataclass(frozen=True, slots=True)
class Origin:
    """Where an activity came from and who sent it, in the gateway's terms."""

    thread_id: str
    sender: str
    name: str | None
    direct: bool = False  # a personal chat: the person and the bot alone


def origin(
    conversation: ConversationAccount, activity_id: str | None, aad_object_id: object, name: object
) -> Origin | None:
    """The thread and person of an activity, or None when either is not one the gateway takes."""
    thread_id = thread_id_for(conversation.id, conversation.conversation_type, activity_id)
    sender = person_for(aad_object_id)
    if thread_id is None or sender is None:
        return None
    direct = conversation.conversation_type == "personal"
    return Origin(thread_id, sender, name if isinstance(name, str) else None, direct)


def strip_mentions(activity: MessageActivity) -> str:
    """The text without the bot's ``<at>…</at>`` mentions (Teams puts one before text in a channel),
    its remaining markup and entities undone: ``<at>Threadgate</at> 2`` answers ``2``."""
    text = activity.text or ""
    for entity in activity.entities or []:
        if isinstance(entity, MentionEntity) and entity.mentioned.id == activity.recipient.id and entity.text:
            text = text.replace(entity.text, " ")
    return html.unescape(_TAGS.sub("", text)).strip()


def to_inbound(activity: MessageActivity, where: Origin) -> InboundMessage | None:
    """A person's message in a thread; None for one without text (a card's own submit, an attachment)."""
    if activity.from_.id == activity.recipient.id:
        return None
    text = strip_mentions(activity)
    if not text:
        return None
    return InboundMessage(
        thread_id=where.thread_id,
        sender=where.sender,
        text=text[:MAX_TEXT_CHARS],
        event_id=f"teams:{activity.id}"[:200],
        direct=where.direct,
    )
