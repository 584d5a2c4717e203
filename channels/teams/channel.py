"""The Teams channel: activities in at ``POST /teams/messages``, items out through the Bot Connector."""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Any

from microsoft_teams.api.activities import ActivityTypeAdapter
from microsoft_teams.api.activities.invoke.adaptive_card import AdaptiveCardInvokeActivity
from microsoft_teams.api.activities.message import MessageActivity
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from channels.teams.auth import ConnectorAuth, KeysUnavailable, Unauthorized
from channels.teams.cards import card_activity, render_item, settled_card, votes_activity
from channels.teams.connector import Connector
from channels.teams.inbound import origin, to_inbound
from channels.teams.presses import message_response, safely
from channels.teams.tenants import FOREIGN_TENANT, from_tenant, tenants_of
from channels.teams.threads import PREFIX, conversation_of, thread_id_for
from gateway.sdk import (
    ChannelContext,
    ChannelError,
    GatewayError,
    MessageRef,
    Names,
    ThreadItem,
    ThreadRef,
    event,
    failure,
    is_json_media_type,
    notices,
    parse_json,
    unsupported_media_type,
)

MESSAGES_PATH = "/teams/messages"
MAX_ACTIVITY_BYTES = 256 * 1024  # Teams caps a message at about 28 KB; a card press is smaller still
UNAUTHORIZED = GatewayError(
    "UNAUTHORIZED",
    "Missing or invalid Bot Connector token: activities must come from the Bot Framework.",
    401,
)
KEYS_UNAVAILABLE = GatewayError(
    "UNAVAILABLE", "The Bot Framework's signing keys cannot be fetched just now; deliver it again.", 503
)
_HANDLED = ("message", "invoke")


PERSONAL_MEMORY = 10_000  # people whose personal chat with the bot this process remembers


def _refused(error: GatewayError) -> Response:
    headers = {"Retry-After": "10"} if error.status == 503 else None
    return JSONResponse(error.envelope(), status_code=error.status, headers=headers)


class TeamsChannel:
    """Microsoft Teams over the Bot Connector.

    Thread ids are ``teams:<conversation id>`` (see ``threads``); a pending prompt is an Adaptive Card
    whose ``Action.Execute`` presses arrive as invokes (``presses``); once it settles its card is updated
    to show the outcome and who, with no controls left.
    """

    platform = "teams"

    def __init__(self, auth: ConnectorAuth, connector: Connector, tenant_id: str | None = None) -> None:
        self.auth = auth
        self.connector = connector
        self.tenant_id = tenant_id  # a single-tenant bot's own tenant: activities from any other are refused
        self._context: ChannelContext | None = None
        self.names = Names()  # of people heard from, to show who answered (else their identity)
        self._personal: OrderedDict[str, str] = OrderedDict()  # person → their personal chat's thread id

    async def start(self, context: ChannelContext) -> None:
        self._context = context

    async def stop(self) -> None:
        self._context = None
        await self.auth.close()
        await self.connector.close()

    def routes(self) -> list[BaseRoute]:
        return [Route(MESSAGES_PATH, self._receive, methods=["POST"])]

    # Outbound --------------------------------------------------------------------------------------

    def mention(self, identity: str) -> str | None:
        """None: a Teams mention carries the person's display name, which the gateway does not keep, so a
        reminder here names nobody (rather than showing their object ids)."""
        return None

    async def post(self, thread: ThreadRef, item: ThreadItem) -> MessageRef:
        """Post ``item`` into the conversation; a channel thread's replies go under its root message. An
        audit item says who answered; an approval's votes are one line, people by the names Teams gave this
        process with their activities."""
        activity = votes_activity(item, self.names.shown) or render_item(
            item, notices.answered_by(item, self.names.shown)
        )
        activity_id = await self.connector.send(conversation_of(thread.thread_id), activity)
        return MessageRef(thread.thread_id, activity_id)

    async def edit(self, ref: MessageRef, item: ThreadItem) -> None:
        """Replace a settled prompt's card: its text, the outcome and who answered, no controls."""
        card = settled_card(item, notices.answered_by(item, self.names.shown))
        await self.connector.update(
            conversation_of(ref.thread_id), ref.message_id, card_activity(card, item.text)
        )

    async def direct_thread(self, identity: str) -> str | None:
        """The person's personal chat with the bot: the one this process heard them in, else one opened
        unasked with their Entra object id in the bot's tenant (``TEAMS_TENANT_ID``), which Teams allows
        where the app is installed for them. None without a tenant, logged; a refusal (the app not
        installed: 403) is a permanent ChannelError, logged here and skipped by the escalation."""
        found = self._personal.get(identity)
        if found is not None:
            return found
        if self.tenant_id is None:
            event(
                "teams.direct_unavailable",
                logging.WARNING,
                identity=identity,
                reason="no personal chat heard from this person, and no TEAMS_TENANT_ID to open one in",
            )
            return None
        try:
            conversation_id = await self.connector.open_personal(
                identity.removeprefix(PREFIX), self.tenant_id
            )
        except ChannelError as exc:
            event("teams.direct_refused", logging.WARNING, identity=identity, error=str(exc))
            raise
        thread_id = thread_id_for(conversation_id, "personal", None)
        if thread_id is None:
            raise ChannelError("Teams opened a personal chat whose id is not one we take", permanent=True)
        self._heard_in_personal(identity, thread_id)
        return thread_id

    def _heard_in_personal(self, identity: str, thread_id: str) -> None:
        self._personal[identity] = thread_id
        self._personal.move_to_end(identity)
        while len(self._personal) > PERSONAL_MEMORY:
            self._personal.popitem(last=False)

    # Inbound ---------------------------------------------------------------------------------------

    async def _receive(self, request: Request) -> Response:
        """Check the Bot Connector's token on the raw request, then read the activity and handle it."""
        body = await request.body()
        if len(body) > MAX_ACTIVITY_BYTES:
            return _refused(
                GatewayError("PAYLOAD_TOO_LARGE", f"An activity is at most {MAX_ACTIVITY_BYTES} bytes.", 413)
            )
        try:
            verified = await self.auth.verify(request.headers.get("authorization"))
        except Unauthorized as exc:
            event("teams.unauthorized", logging.INFO, reason=str(exc))
            return _refused(UNAUTHORIZED)
        except KeysUnavailable as exc:
            event("teams.keys_unavailable", logging.WARNING, error=str(exc))
            return _refused(KEYS_UNAVAILABLE)
        content_type = request.headers.get("content-type")
        if not is_json_media_type(content_type):
            return _refused(unsupported_media_type(content_type))
        try:
            payload = parse_json(body)
        except GatewayError as exc:
            return _refused(exc)
        if not isinstance(payload, dict):
            return _refused(GatewayError("VALIDATION_FAILED", "An activity is a JSON object.", 400))
        try:
            verified.check_activity(payload.get("channelId"), payload.get("serviceUrl"))
        except Unauthorized as exc:
            event("teams.unauthorized", logging.INFO, reason=str(exc))
            return _refused(UNAUTHORIZED)
        if payload.get("type") not in _HANDLED:
            return Response(status_code=200)  # conversation updates, reactions, typing: nothing to do
        try:
            activity = ActivityTypeAdapter.validate_python(payload)
        except ValidationError as exc:
            # Signed by the Bot Framework but not a shape we read: delivered again, it would fail again.
            event("teams.activity.unreadable", logging.WARNING, kind=str(payload.get("type")), **failure(exc))
            if payload.get("type") == "invoke":
                return JSONResponse(message_response(notices.MISMATCH))
            return Response(status_code=200)
        if not from_tenant(self.tenant_id, activity):
            # Authentic but never ours: acknowledged like any activity refused for good (a non-2xx would
            # only have the Bot Connector deliver it again), and nothing of it is kept or learned.
            event(
                "teams.tenant_refused",
                logging.WARNING,
                kind=activity.type,
                tenants=sorted(tenants_of(activity)),
            )
            if activity.type == "invoke":
                return JSONResponse(message_response(FOREIGN_TENANT))
            return Response(status_code=200)
        return await self._handle(activity)

    async def _handle(self, activity: Any) -> Response:
        context = self._context
        if context is None:  # not started yet: the Bot Connector delivers it again
            return _refused(GatewayError("UNAVAILABLE", "The Teams channel is not running yet.", 503))
        where = origin(activity.conversation, activity.id, activity.from_.aad_object_id, activity.from_.name)
        if where is not None:  # the serviceUrl was checked against the token: replies may go there
            self.connector.learn(conversation_of(where.thread_id), activity.service_url)
            self.names.learn(where.sender, where.name)
            if where.direct:
                self._heard_in_personal(where.sender, where.thread_id)
        if isinstance(activity, AdaptiveCardInvokeActivity):
            if where is None:
                return JSONResponse(message_response(notices.MISMATCH))
            return JSONResponse(await safely(context.sink, activity, where))
        if not isinstance(activity, MessageActivity) or where is None:
            return Response(status_code=200)
        message = to_inbound(activity, where)
        if message is None:
            return Response(status_code=200)
        try:
            received = await context.sink.receive(message)
        except GatewayError as exc:
            if exc.status < 500:  # the core refused it: delivered again, it would be refused again
                event("teams.inbound.refused", logging.WARNING, error=exc.code)
                return Response(status_code=200)
            return _refused(exc)
        except Exception as exc:  # the store is away: the Bot Connector delivers it again
            event("teams.inbound.failed", logging.WARNING, **failure(exc))
            return _refused(GatewayError("UNAVAILABLE", "The activity could not be taken just now.", 503))
        event("teams.inbound", thread_id=message.thread_id, outcome=received.outcome.value)
        return Response(status_code=200)


__all__ = ["PREFIX", "TeamsChannel"]
