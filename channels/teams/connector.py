"""Calls to the Bot Connector: the app's token, activities posted and updated in conversations, and
personal chats opened unasked.

The token is the client-credentials grant for ``https://api.botframework.com/.default``, kept until
shortly before it expires. Activities go through the Teams SDK's conversation client to the
conversation's ``serviceUrl``: the one its latest verified activity named, else ``TEAMS_SERVICE_URL``
(the global endpoint, which routes to every region), so a restarted process or another one replies
without having heard from the conversation. A short rate limit is waited out; a longer one, and every
other failure, becomes a ChannelError.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote

import httpx
from microsoft_teams.api.activities.message import MessageActivityInput
from microsoft_teams.api.clients.conversation import ConversationActivityClient, ConversationClient
from microsoft_teams.api.clients.conversation.params import CreateConversationParams
from microsoft_teams.api.models import Account
from microsoft_teams.common.http import Client, ClientOptions

from gateway.sdk import ChannelError
from gateway.sdk import retry_after as header_wait

SCOPE = "https://api.botframework.com/.default"
TIMEOUT_S = 10.0
TOKEN_MARGIN_S = 300.0  # a token is renewed this long before it expires
MAX_INLINE_WAIT_S = 5.0
DEFAULT_RETRY_AFTER_S = 1.0
SERVICE_URL_MEMORY = 10_000  # conversations whose service URL is remembered


def retry_after(response: httpx.Response) -> float:
    """Seconds a 429 asks us to wait (``Retry-After`` in seconds or as an HTTP date)."""
    wait = header_wait(response.headers)
    return DEFAULT_RETRY_AFTER_S if wait is None else wait


class Tokens:
    """The app's Bot Connector token, fetched once and reused until shortly before it expires."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        token_url: str,
        app_id: str,
        password: str,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.http = http
        self.token_url = token_url
        self.app_id = app_id
        self._password = password
        self.clock = clock
        self._token: str | None = None
        self._until = 0.0
        self._lock = asyncio.Lock()

    async def get(self) -> str:
        if self._token is not None and self.clock() < self._until:
            return self._token
        async with self._lock:
            if self._token is None or self.clock() >= self._until:
                self._token, lifetime = await self.fetch()
                self._until = self.clock() + max(lifetime - TOKEN_MARGIN_S, lifetime / 2)
        return self._token

    def forget(self) -> None:
        self._token = None

    async def fetch(self) -> tuple[str, float]:
        """A new token and its lifetime in seconds; ChannelError saying what failed."""
        form = {
            "grant_type": "client_credentials",
            "client_id": self.app_id,
            "client_secret": self._password,
            "scope": SCOPE,
        }
        try:
            response = await self.http.post(self.token_url, data=form)
        except httpx.HTTPError as exc:
            raise ChannelError(f"the token endpoint could not be reached ({type(exc).__name__})") from exc
        body: Any = None
        with contextlib.suppress(ValueError):
            body = response.json()
        if response.status_code != 200 or not isinstance(body, dict):
            error = body.get("error") if isinstance(body, dict) else None
            permanent = response.status_code in (400, 401)
            raise ChannelError(
                f"the token endpoint refused TEAMS_APP_ID/TEAMS_APP_PASSWORD: "
                f"{error or f'HTTP {response.status_code}'}",
                permanent=permanent,
            )
        token, lifetime = body.get("access_token"), body.get("expires_in")
        if not isinstance(token, str) or not isinstance(lifetime, int | float) or isinstance(lifetime, bool):
            raise ChannelError("the token endpoint answered without access_token and expires_in")
        return token, float(lifetime)


class Connector:
    """Posts and updates activities in Teams conversations."""

    def __init__(
        self,
        app_id: str,
        password: str,
        token_url: str,
        default_service_url: str,
        *,
        max_inline_wait: float = MAX_INLINE_WAIT_S,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._http = httpx.AsyncClient(timeout=TIMEOUT_S)
        self.tokens = Tokens(self._http, token_url, app_id, password)
        self.default_service_url = default_service_url
        self.max_inline_wait = max_inline_wait
        self.sleep = sleep
        self._service_urls: OrderedDict[str, str] = OrderedDict()
        self._client = Client(ClientOptions(token=self.tokens.get, timeout=TIMEOUT_S))
        self.activities = ConversationActivityClient(default_service_url, self._client)
        self.conversations = ConversationClient(default_service_url, self._client)
        self.bot_id = f"28:{app_id}"

    async def close(self) -> None:
        await self._client.http.aclose()
        await self._http.aclose()

    def learn(self, conversation_id: str, service_url: str) -> None:
        """Remember where a conversation's activities go (from a verified inbound activity)."""
        self._service_urls[conversation_id] = service_url
        self._service_urls.move_to_end(conversation_id)
        while len(self._service_urls) > SERVICE_URL_MEMORY:
            self._service_urls.popitem(last=False)

    def service_url(self, conversation_id: str) -> str:
        return self._service_urls.get(conversation_id) or self.default_service_url

    async def send(self, conversation_id: str, activity: MessageActivityInput) -> str:
        """Post ``activity`` into the conversation (a channel thread's id posts into that thread)."""

        async def create() -> str:
            sent = await self.activities.create(
                quote(conversation_id, safe=""), activity, service_url=self.service_url(conversation_id)
            )
            return str(sent.id)

        activity_id: str = await self._call("post", create)
        return activity_id

    async def open_personal(self, aad_object_id: str, tenant_id: str) -> str:
        """The conversation id of the personal (1:1) chat between the bot and the user with that Entra
        object id, opened unasked (``POST {serviceUrl}/v3/conversations``; the same user gives the same
        chat). Teams opens it only where the app is installed for the user: else 403, a permanent
        ChannelError. Asked at ``TEAMS_SERVICE_URL``, as no activity of that chat has named another."""

        async def create() -> str:
            params = CreateConversationParams(
                members=[Account(id=aad_object_id)],
                tenant_id=tenant_id,
                channel_data={"tenant": {"id": tenant_id}},
                bot={"id": self.bot_id},  # sent as the Bot Connector spells them (the SDK's model lacks them)
                isGroup=False,
            )
            opened = await self.conversations.create(params)
            if opened.service_url:
                self.learn(opened.id, opened.service_url)
            return str(opened.id)

        conversation_id: str = await self._call("personal chat", create)
        return conversation_id

    async def update(self, conversation_id: str, activity_id: str, activity: MessageActivityInput) -> None:
        """Replace a posted activity (a settled prompt's card)."""

        async def replace() -> None:
            await self.activities.update(
                quote(conversation_id, safe=""),
                quote(activity_id, safe=""),
                activity,
                service_url=self.service_url(conversation_id),
            )

        await self._call("update", replace)

    async def _call(self, what: str, request: Callable[[], Awaitable[Any]]) -> Any:
        waited = 0.0
        while True:
            try:
                return await request()
            except httpx.HTTPStatusError as exc:
                status = exc.response.status_code
                if status == 429:
                    delay = retry_after(exc.response)
                    if waited + delay > self.max_inline_wait:
                        raise ChannelError(
                            f"Teams rate-limited the {what}; retry in {delay:g} s", retry_after=delay
                        ) from exc
                    await self.sleep(delay)
                    waited += delay
                    continue
                if status == 401:
                    self.tokens.forget()  # a token revoked early: the next call fetches a new one
                permanent = 400 <= status < 500 and status not in (401, 408)
                raise ChannelError(f"Teams refused the {what}: HTTP {status}", permanent=permanent) from exc
            except httpx.HTTPError as exc:
                raise ChannelError(
                    f"Teams could not be reached for the {what} ({type(exc).__name__})"
                ) from exc
            except (KeyError, ValueError, TypeError) as exc:  # the SDK reads the answer's ``id``
                raise ChannelError(f"Teams answered the {what} without an id") from exc
