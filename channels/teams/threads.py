"""Teams conversation ids as thread ids, and AAD object ids as people. Pure.

A thread id is ``teams:<conversation id>``. Teams conversation ids look like
``19:<id>@thread.tacv2`` (a channel; a thread in it adds ``;messageid=<root message id>``),
``19:<id>@thread.v2`` or ``19:<id>@unq.gbl.spaces`` (group and meeting chats) and ``a:<id>`` (a
personal chat with the bot). The grammar takes only those shapes, in letters, digits and ``_ . - : @ ;
=``: every one of them may stand unencoded in a URL path segment, and none is white space, ``/``, ``?``,
``#`` or ``%``, so a thread id is one path-segment-safe string with one spelling. Outbound calls still
percent-encode the conversation id, as the Bot Connector expects.
"""

from __future__ import annotations

import re

PREFIX = "teams:"
# ``19:`` chats and channels: a local part, ``@`` and a domain such as ``thread.tacv2``.
_CHAT = r"19:[A-Za-z0-9_.-]{1,100}@[A-Za-z0-9.]{1,32}"
_PERSONAL = r"a:[A-Za-z0-9_-]{1,180}"
THREADS = re.compile(
    rf"teams:(?P<conversation>{_CHAT}(?:;messageid=(?P<root>[0-9]{{1,20}}))?|{_PERSONAL})", re.ASCII
)
CHANNELS = re.compile(rf"teams:(?P<channel>{_CHAT})", re.ASCII)
# An Entra ID (AAD) object id, lower-case: one spelling per person.
PEOPLE = re.compile(r"teams:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.ASCII)
THREAD_EXAMPLE = "teams:<conversation id>"
CHANNEL_EXAMPLE = "teams:<channel conversation id>"
PERSON_EXAMPLE = "teams:<AAD object id>"


def conversation_of(thread_id: str) -> str:
    """The Bot Connector conversation id a thread id names (a channel thread's keeps its ``messageid``)."""
    return thread_id.removeprefix(PREFIX)


def thread_id_for(conversation_id: str, conversation_type: str | None, activity_id: str | None) -> str | None:
    """The thread an activity in ``conversation_id`` belongs to, or None when the id is not one we take.

    In a channel each root message starts a thread: Teams names it ``<channel>;messageid=<root>``; a
    root post that arrives without it is its own root. A group or personal chat is one thread.
    """
    if conversation_type == "channel" and ";messageid=" not in conversation_id and activity_id:
        conversation_id = f"{conversation_id};messageid={activity_id}"
    thread_id = f"{PREFIX}{conversation_id}"
    return thread_id if THREADS.fullmatch(thread_id) else None


def person_for(aad_object_id: object) -> str | None:
    """``teams:<aad object id>``, or None when the activity names nobody we can tell apart."""
    if not isinstance(aad_object_id, str):
        return None
    identity = f"{PREFIX}{aad_object_id.lower()}"
    return identity if PEOPLE.fullmatch(identity) else None
