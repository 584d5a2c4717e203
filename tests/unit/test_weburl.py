"""A URL step's link is judged by the host a browser would open, and anything read two ways is refused."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from gateway.base.models import PromptRequest, check_step_url
from gateway.base.weburl import UrlError, parse_web_url


def step(url: str) -> PromptRequest:
    return PromptRequest.model_validate({"kind": "url", "message": "Finish the setup", "url": url})


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8787/setup",
        "http://127.1/",  # short IPv4: 127.0.0.1
        "http://0x7f.0.0.1/",  # hex part
        "http://0x7F000001/",
        "http://0177.0.0.1/",  # octal part
        "http://2130706433/",  # one decimal number
        "http://127.0.0.1./",  # a trailing dot ends an IPv4 address too
        "http://127.255.255.254/",
        "http://LOCALHOST/",
        "HTTP://localhost:80/x",
        "http://setup.localhost/",
        "http://[::1]:9000/",
        "http://[0:0:0:0:0:0:0:1]/",
        "http://127.0.0.1/a@b",  # '@' after the host, in the path, is no userinfo
        "http://127.0.0.1?next=@evil.example",
        "http://127.0.0.1#@evil.example",
    ],
)
def test_http_to_this_machine_in_any_form_a_browser_reads_as_loopback_is_taken(url: str) -> None:
    assert check_step_url(url) == url
    assert parse_web_url(url).loopback


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://evil.example\\@127.0.0.1/", "backslash"),
        ("https://evil.example\\@good.example/", "backslash"),
        ("http://127.0.0.1\\evil.example/", "backslash"),
        ("http://evil.example@127.0.0.1/", "user name"),
        ("http://127.0.0.1:80@evil.example/", "user name"),
        ("https://user:pass@example.com/", "user name"),
        ("http://127.0.0.1%2e/", "host must be"),
        ("http://127%2e0%2e0%2e1/", "host must be"),
        ("http://%6cocalhost/", "host must be"),
        ("http://loc\talhost/", "white space"),
        ("http://127.0.0.1\n.evil.example/", "white space"),
        (" http://127.0.0.1/", "white space"),
        ("http://127.0.0.1/\r", "white space"),
        ("http://１２７.0.0.1/", "ASCII"),
        ("http://127。0。0。1/", "ASCII"),
        ("http:127.0.0.1/", "http://"),
        ("http:/127.0.0.1/", "http://"),
        ("http:///127.0.0.1/", "http://"),
        ("http://127.0.0.1.5/", "IPv4"),
        ("http://256.0.0.1/", "IPv4"),
        ("http://09.0.0.1/", "IPv4"),
        ("http://4294967296/", "IPv4"),
        ("http://127.0.0.1:99999/", "port"),
        ("http://127.0.0.1:8x/", "port"),
        ("http://[::1/", "IPv6"),
        ("http://[::1%25lo]/", "IPv6"),
        ("http://[::1]x/", "IPv6"),
        ("http://[127.0.0.1]/", "IPv6"),
        ("http:///", "http://"),
        ("https://", "host must be"),
        ("ftp://127.0.0.1/", "https://"),
        ("javascript:alert(1)//127.0.0.1", "https://"),
    ],
)
def test_a_url_a_browser_could_read_differently_is_refused(url: str, why: str) -> None:
    with pytest.raises(UrlError, match=why):
        parse_web_url(url)
    with pytest.raises(ValidationError, match="url must be https"):
        step(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost./",  # a name with a trailing dot: not the exact loopback name
        "http://localhost.evil.example/",
        "http://127.0.0.1.evil.example/",
        "http://evil.example/127.0.0.1",
        "http://0/",  # 0.0.0.0
        "http://0x/",
        "http://[::ffff:127.0.0.1]/",  # IPv4-mapped: refused rather than argued about
        "http://[::]/",
        "http://10.0.0.1/",
    ],
)
def test_http_to_any_other_host_is_refused(url: str) -> None:
    assert not parse_web_url(url).loopback
    with pytest.raises(ValidationError, match="is not this machine"):
        step(url)


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://Example.COM/connect", "example.com"),
        ("HTTPS://example.com:443/", "example.com"),
        ("https://[2001:DB8::1]/", "[2001:db8::1]"),
        ("https://0x08.8.8.8/", "8.8.8.8"),
        ("https://example.com./", "example.com."),
    ],
)
def test_https_to_any_host_is_taken_with_the_host_a_browser_reads(url: str, host: str) -> None:
    parsed = parse_web_url(url)
    assert (parsed.scheme, parsed.host) == ("https", host)
    assert step(url).url == url
