"""Every ingress route, sent hostile input with and without valid credentials: never a 5xx, a bad
credential is refused before the body is parsed, and a refusal logs at most one short line."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from channels.slack.verify import signature_of
from tests.fuzz.conftest import AGENT_TOKEN, OPERATOR_TOKEN, TELEGRAM_SECRET, IngressGateway, auth
from tests.fuzz.strategies import Call, calls
from tests.support.log_capture import assert_short_lines, captured_logs

EXAMPLES = int(os.environ.get("THREADGATE_FUZZ_EXAMPLES", "1500"))  # raise it locally to dig deeper
OPERATOR_PATHS = ("/inputs/", "/respond")
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=os.environ.get("CI") == "true",  # CI runs the same examples each time
    suppress_health_check=list(HealthCheck),
)


@pytest.fixture(scope="module")
def client(ingress: IngressGateway) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=ingress.base_url, timeout=15) as http:
        yield http


def _api_token(call: Call) -> str:
    operator = any(part in call.path for part in OPERATOR_PATHS) or (
        call.route.method == "PUT" and "/agents/" in call.path
    )
    if call.credential == "other":
        operator = not operator
    return OPERATOR_TOKEN if operator else AGENT_TOKEN


def credential_headers(call: Call, slack_secret: str) -> dict[str, str]:
    """The headers that carry (or fail to carry) the route's credential."""
    family, credential, body = call.route.family, call.credential, call.body or b""
    if credential == "none" or family == "page":
        return {}
    if family == "api":
        return auth("not-a-token") if credential == "wrong" else auth(_api_token(call))
    if family == "slack":
        stamp = "9" * 400 if credential == "other" else str(int(time.time()))
        signature = "v0=" + "0" * 64 if credential == "wrong" else signature_of(slack_secret, stamp, body)
        return {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": signature}
    if family == "telegram":
        secret = {"wrong": "not-the-secret", "other": TELEGRAM_SECRET + "x"}.get(credential, TELEGRAM_SECRET)
        return {"X-Telegram-Bot-Api-Secret-Token": secret}
    token = {"wrong": "not-a-web-token", "other": "web-alice-token"}.get(credential, "web-room-password")
    return auth(token)


def send(client: httpx.Client, call: Call, slack_secret: str) -> httpx.Response:
    headers = {**call.headers, **credential_headers(call, slack_secret)}
    if call.content_type is not None:
        headers["Content-Type"] = call.content_type
    request = client.build_request(
        call.route.method, call.path, params=call.query, content=call.body, headers=headers
    )
    response = client.send(request, stream=True)
    try:
        if not (call.route.stream and response.status_code == 200):
            response.read()  # an open event stream is only checked for its status
    finally:
        response.close()
    return response


def refused_before_parsing(call: Call) -> bool:
    """A request whose credential is missing or wrong, on a route that needs one for any body."""
    if call.credential not in ("none", "wrong") and not (
        call.credential == "other" and call.route.family in ("slack", "telegram")
    ):
        return False
    if call.route.family in ("api", "slack", "telegram"):
        return True
    return call.route.family == "web" and call.route.method == "POST"


def test_no_input_on_any_route_gets_a_5xx_or_logs_a_traceback(
    ingress: IngressGateway, client: httpx.Client
) -> None:
    @FUZZ
    @given(call=calls(ingress.seeded))
    def property_holds(call: Call) -> None:
        with captured_logs() as records:
            response = send(client, call, ingress.slack.signing_secret)
        where = f"{call.route.method} {call.path[:120]} ({call.credential}, {call.content_type!r})"
        where += f" {call.body!r:.300}"
        assert response.status_code < 500, f"{where}: {response.status_code} {response.text[:300]}"
        if refused_before_parsing(call):  # 404: the path no longer names the route once decoded
            assert response.status_code in (401, 404), (
                f"{where}: {response.status_code} {response.text[:300]}"
            )
        if refused_before_parsing(call) and call.route.family == "api":
            assert response.status_code == 401, f"{where}: {response.status_code} {response.text[:300]}"
        assert_short_lines(records)

    property_holds()


@pytest.mark.parametrize("field", ["expires_in_seconds"])
def test_booleans_are_refused_where_numbers_go(
    ingress: IngressGateway, client: httpx.Client, field: str
) -> None:
    run_id = ingress.seeded["run_id"]
    for value in (True, False):
        body = {"kind": "text", "questions": [{"question": "?"}], field: value}
        prompt = client.post(f"/v1/runs/{run_id}/prompts", json=body, headers=auth(AGENT_TOKEN))
        agent = client.put(
            "/v1/agents/ops", json={"human_input": {field: value}}, headers=auth(OPERATOR_TOKEN)
        )
        assert (prompt.status_code, agent.status_code) == (400, 400), (prompt.text, agent.text)


@given(label=st.text(alphabet="\u200b\u200c\u200d\u2060\ufeff\u202e\u3164\u2800 \t", min_size=1, max_size=8))
@settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))
def test_an_option_label_needs_a_visible_character(
    ingress: IngressGateway, client: httpx.Client, label: str
) -> None:
    body = {
        "kind": "ask_user_question",
        "questions": [{"question": "?", "options": [{"label": label}, {"label": "b"}]}],
    }
    response = client.post(
        f"/v1/runs/{ingress.seeded['run_id']}/prompts", json=body, headers=auth(AGENT_TOKEN)
    )
    assert response.status_code == 400, response.text
