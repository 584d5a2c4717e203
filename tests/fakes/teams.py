"""A local Bot Framework that speaks the Bot Connector's wire protocol, for driving the Teams channel.

- OpenID metadata (``/openid``) naming a JWKS (``/keys``) with one RSA key generated per process, whose
  ``endorsements`` list ``msteams``; the number of key fetches is counted.
- The token endpoint (``/token``): the client-credentials grant, checked against the app's credentials.
- The conversations API under the service URL (``/teams/v3/conversations/...``): posts and updates are
  recorded, as Teams keeps them (an update replaces the activity); ``fail()`` queues failures (a 429 with
  ``Retry-After``, a 5xx) for the next calls.
- ``POST /teams/v3/conversations`` opens a personal chat unasked, as Teams does for a bot: the bot, one
  member (a user's Entra object id), ``isGroup`` false and the tenant are checked; it answers the same ``a:``
  conversation id for the same user, or 403 ``BotNotInConversationRoster`` for a user in ``not_installed``.
  What was asked is kept in ``opened``; posting into the chat then works like any conversation.
- ``deliver()`` signs an activity with the key (or with any claims or key a test wants) and POSTs it to
  the gateway's ``/teams/messages`` as the Bot Connector does; ``press()`` presses an ``Action.Execute`` on
  a card the gateway posted (or on a card one of its ``Action.ShowCard`` shows), with the input values of
  that card and the cards around it, as an ``adaptiveCard/action`` invoke.
"""

from __future__ import annotations

import itertools
import json
import socket
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import httpx
import jwt
from aiohttp import web
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

ISSUER = "https://api.botframework.com"
APP_ID = "00000000-0000-0000-0000-0000000000b0"
APP_PASSWORD = "fake-teams-secret"
BOT_ID = f"28:{APP_ID}"
TENANT = "00000000-0000-0000-0000-00000000ten7"


@cache
def rsa_key(name: str = "connector") -> rsa.RSAPrivateKey:
    """An RSA key made once per process (per name): signing keys for the fake and for forgers."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def person(name: str) -> dict[str, Any]:
    """A Teams user: a ``29:`` id, a display name, and an AAD object id derived from the name."""
    aad = str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{name}.example.com"))
    return {"id": f"29:1{name}", "name": name.title(), "aadObjectId": aad}


def identity(name: str) -> str:
    return f"teams:{person(name)['aadObjectId']}"


def personal_chat(aad_object_id: str) -> str:
    """The conversation id of the personal chat between the bot and a user (one per user)."""
    return f"a:1{uuid.UUID(aad_object_id).hex}"


def _is_object_id(value: object) -> bool:
    try:
        return isinstance(value, str) and str(uuid.UUID(value)) == value
    except ValueError:
        return False


@dataclass
class Posted:
    """An activity the bot posted, as Teams keeps it now (updates replace it)."""

    id: str
    conversation_id: str
    raw_path: str
    body: dict[str, Any]
    updates: list[dict[str, Any]] = field(default_factory=list)

    @property
    def card(self) -> dict[str, Any] | None:
        for attachment in self.body.get("attachments") or []:
            if attachment.get("contentType") == "application/vnd.microsoft.card.adaptive":
                return dict(attachment["content"])
        return None

    @property
    def text(self) -> str:
        """The text a person reads: the message's, or the card's text blocks."""
        card = self.card
        if card is None:
            return str(self.body.get("text") or "")
        return "\n".join(str(e.get("text")) for e in card.get("body") or [] if e.get("type") == "TextBlock")

    def actions(self) -> list[dict[str, Any]]:
        return list((self.card or {}).get("actions") or [])

    def action(self, title: str) -> dict[str, Any]:
        """The action titled ``title``: on the card, or on a card an ``Action.ShowCard`` of it shows."""
        return self._path_to(title)[0]

    def _path_to(self, title: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The action titled ``title`` and the cards it sits in, outermost first (a person opens each
        ``Action.ShowCard`` on the way)."""
        pending = [(self.card or {}, [self.card or {}])]
        while pending:
            card, path = pending.pop(0)
            for action in card.get("actions") or []:
                if action.get("title") == title:
                    return action, path
                if action.get("type") == "Action.ShowCard" and isinstance(action.get("card"), dict):
                    pending.append((action["card"], [*path, action["card"]]))
        raise AssertionError(f"no action {title!r} on the card: {[a.get('title') for a in self.actions()]}")

    def inputs(self, title: str | None = None) -> dict[str, dict[str, Any]]:
        """The card's inputs by id; with ``title``, those an action of that title sends: its own card's and
        the cards around it (an ``Action.ShowCard``'s inputs, and the card's own)."""
        cards = [self.card or {}] if title is None else self._path_to(title)[1]
        return {
            e["id"]: e
            for card in cards
            for e in card.get("body") or []
            if str(e.get("type")).startswith("Input.")
        }


class FakeTeams:
    """The Bot Framework's login, keys and conversations API, on a loopback port."""

    def __init__(self) -> None:
        self.key = rsa_key()
        self.kid = "fake-key-1"
        self.endorsements = ["msteams"]
        self.key_fetches = 0
        self.token_requests: list[dict[str, str]] = []
        self.issued: set[str] = set()
        self.posts: list[Posted] = []
        self.calls: list[tuple[str, str]] = []  # (method, raw path) of every conversations API call
        self.unauthorized_calls = 0
        self.opened: list[dict[str, Any]] = []  # bodies of the personal chats opened unasked
        self.not_installed: set[str] = set()  # Entra object ids of users without the app
        self._failures: deque[tuple[int, dict[str, str]]] = deque()
        self._ids = itertools.count(1_712_345_600_000)
        self._runner: web.AppRunner | None = None
        self.base_url = ""

    # Server ------------------------------------------------------------------------------------------

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/openid", self._metadata)
        app.router.add_get("/keys", self._keys)
        app.router.add_post("/token", self._token)
        app.router.add_post("/teams/v3/conversations", self._open)
        app.router.add_post("/teams/v3/conversations/{conversation}/activities", self._create)
        app.router.add_put("/teams/v3/conversations/{conversation}/activities/{activity}", self._update)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        site = web.SockSite(self._runner, sock)
        await site.start()
        self.base_url = f"http://127.0.0.1:{sock.getsockname()[1]}"

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def metadata_url(self) -> str:
        return f"{self.base_url}/openid"

    @property
    def token_url(self) -> str:
        return f"{self.base_url}/token"

    @property
    def service_url(self) -> str:
        return f"{self.base_url}/teams/"

    def fail(self, status: int, *, retry_after: str | None = None, times: int = 1) -> None:
        """The next ``times`` conversations API calls answer ``status`` (with ``Retry-After`` if given)."""
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        self._failures.extend([(status, headers)] * times)

    async def _metadata(self, _request: web.Request) -> web.Response:
        return web.json_response(
            {
                "issuer": ISSUER,
                "authorization_endpoint": "https://invalid.botframework.com",
                "jwks_uri": f"{self.base_url}/keys",
                "id_token_signing_alg_values_supported": ["RS256"],
                "token_endpoint_auth_methods_supported": ["private_key_jwt"],
            }
        )

    def jwk(self) -> dict[str, Any]:
        entry = json.loads(RSAAlgorithm.to_jwk(self.key.public_key()))
        return {**entry, "use": "sig", "kid": self.kid, "x5t": self.kid, "endorsements": self.endorsements}

    async def _keys(self, _request: web.Request) -> web.Response:
        self.key_fetches += 1
        return web.json_response({"keys": [self.jwk()]})

    async def _token(self, request: web.Request) -> web.Response:
        form = {key: str(value) for key, value in (await request.post()).items()}
        self.token_requests.append(form)
        expected = {
            "grant_type": "client_credentials",
            "client_id": APP_ID,
            "client_secret": APP_PASSWORD,
            "scope": "https://api.botframework.com/.default",
        }
        if form != expected:
            return web.json_response({"error": "invalid_client"}, status=401)
        token = f"bot-token-{uuid.uuid4().hex}"
        self.issued.add(token)
        return web.json_response(
            {"token_type": "Bearer", "expires_in": 3599, "ext_expires_in": 3599, "access_token": token}
        )

    def _authorized(self, request: web.Request) -> bool:
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        ok = scheme == "Bearer" and token in self.issued
        self.unauthorized_calls += not ok
        return ok

    def _failure(self) -> web.Response | None:
        if not self._failures:
            return None
        status, headers = self._failures.popleft()
        return web.json_response(
            {"error": {"code": "Failure", "message": "injected"}}, status=status, headers=headers
        )

    def _admit(self, request: web.Request) -> web.Response | None:
        """Note the call; the refusal it gets (no valid token, an injected failure), or None to go on."""
        self.calls.append(("POST", request.raw_path))
        if not self._authorized(request):
            return web.json_response({"error": {"code": "Unauthorized"}}, status=401)
        return self._failure()

    async def _create(self, request: web.Request) -> web.Response:
        if (refused := self._admit(request)) is not None:
            return refused
        posted = Posted(
            str(next(self._ids)), request.match_info["conversation"], request.raw_path, await request.json()
        )
        self.posts.append(posted)
        return web.json_response({"id": posted.id})

    async def _open(self, request: web.Request) -> web.Response:
        if (refused := self._admit(request)) is not None:
            return refused
        body = await request.json()
        members = body.get("members") or []
        well_formed = (
            (body.get("bot") or {}).get("id") == BOT_ID
            and body.get("isGroup") is False
            and body.get("tenantId") == TENANT
            and ((body.get("channelData") or {}).get("tenant") or {}).get("id") == TENANT
            and len(members) == 1
            and _is_object_id(members[0].get("id"))
        )
        if not well_formed:
            return web.json_response(
                {"error": {"code": "BadSyntax", "message": "Incorrect conversation"}}, status=400
            )
        self.opened.append(body)
        user = str(members[0]["id"])
        if user in self.not_installed:
            message = "The bot is not part of the conversation roster."
            return web.json_response(
                {"error": {"code": "BotNotInConversationRoster", "message": message}}, status=403
            )
        return web.json_response({"id": personal_chat(user)}, status=201)

    async def _update(self, request: web.Request) -> web.Response:
        self.calls.append(("PUT", request.raw_path))
        if not self._authorized(request):
            return web.json_response({"error": {"code": "Unauthorized"}}, status=401)
        failed = self._failure()
        if failed is not None:
            return failed
        activity_id = request.match_info["activity"]
        found = [
            p
            for p in self.posts
            if p.id == activity_id and p.conversation_id == request.match_info["conversation"]
        ]
        if not found:
            return web.json_response({"error": {"code": "NotFound"}}, status=404)
        body = await request.json()
        found[0].updates.append(found[0].body)
        found[0].body = body
        return web.json_response({"id": activity_id})

    # The Bot Connector's side --------------------------------------------------------------------------

    def token(self, *, key: rsa.RSAPrivateKey | None = None, kid: str | None = None, **claims: Any) -> str:
        """A Bot Connector token for this app and service URL; ``claims`` override or drop (None) any."""
        now = int(time.time())
        payload: dict[str, Any] = {
            "serviceurl": self.service_url,
            "nbf": now - 5,
            "exp": now + 3600,
            "iss": ISSUER,
            "aud": APP_ID,
        }
        payload.update(claims)
        payload = {name: value for name, value in payload.items() if value is not None}
        return jwt.encode(payload, key or self.key, algorithm="RS256", headers={"kid": kid or self.kid})

    async def deliver(
        self,
        url: str,
        activity: dict[str, Any] | bytes,
        *,
        token: str | None = None,
        authorization: str | None = None,
        **claims: Any,
    ) -> httpx.Response:
        """POST an activity to the bot as the Bot Connector does, signed unless told otherwise."""
        if authorization is None:
            authorization = f"Bearer {token or self.token(**claims)}"
        headers = {"Content-Type": "application/json; charset=utf-8"}
        if authorization:
            headers["Authorization"] = authorization
        body = activity if isinstance(activity, bytes) else json.dumps(activity).encode()
        async with httpx.AsyncClient(timeout=10) as client:
            return await client.post(url, content=body, headers=headers)

    def activity(self, kind: str, conversation: dict[str, Any], sender: str, **fields: Any) -> dict[str, Any]:
        """An activity of ``kind`` from ``sender`` in ``conversation``, shaped like Teams'."""
        return {
            "type": kind,
            "id": f"f:{uuid.uuid4().hex}" if kind == "invoke" else str(next(self._ids)),
            "timestamp": "2024-04-05T10:00:00.000Z",
            "localTimestamp": "2024-04-05T12:00:00.000+02:00",
            "serviceUrl": self.service_url,
            "channelId": "msteams",
            "from": person(sender),
            "conversation": {"tenantId": TENANT, **conversation},
            "recipient": {"id": BOT_ID, "name": "Threadgate"},
            "channelData": {"tenant": {"id": TENANT}},
            "locale": "en-US",
            **fields,
        }

    def message(
        self, conversation: dict[str, Any], sender: str, text: str, *, mention: bool = False
    ) -> dict[str, Any]:
        """A person's message; in a channel Teams puts the bot's mention first."""
        fields: dict[str, Any] = {"text": text, "textFormat": "plain"}
        if mention:
            tag = "<at>Threadgate</at>"
            fields["text"] = f"{tag} {text}"
            fields["entities"] = [
                {"type": "mention", "text": tag, "mentioned": {"id": BOT_ID, "name": "Threadgate"}}
            ]
        return self.activity("message", conversation, sender, **fields)

    def press(
        self, posted: Posted, title: str, sender: str, inputs: dict[str, str] | None = None
    ) -> dict[str, Any]:
        """The invoke Teams sends when ``sender`` presses ``title`` on a posted card: the action's data
        merged with the card's input values (each input's current value unless ``inputs`` sets it)."""
        action = posted.action(title)
        assert action.get("type") == "Action.Execute", action
        values = {
            name: str(element["value"])
            for name, element in posted.inputs(title).items()
            if element.get("value") is not None
        }
        values.update(inputs or {})
        data = {**values, **(action.get("data") or {})}
        conversation = {"id": posted.conversation_id}
        if ";messageid=" in posted.conversation_id:
            conversation.update(conversationType="channel", isGroup=True)
        elif posted.conversation_id.startswith("a:"):
            conversation["conversationType"] = "personal"
        else:
            conversation.update(conversationType="groupChat", isGroup=True)
        value = {
            "action": {"type": "Action.Execute", "verb": action.get("verb"), "data": data},
            "trigger": "manual",
        }
        return self.activity(
            "invoke", conversation, sender, name="adaptiveCard/action", value=value, replyToId=posted.id
        )
