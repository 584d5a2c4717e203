"""Webhook targets: never the Redis server's address, however it is spelled; a warning for loopback,
link-local and private ranges unless THREADGATE_WEBHOOKS_ALLOW_PRIVATE says they are meant."""

from __future__ import annotations

import ipaddress
import socket

import pytest

from gateway.delivery.webhook_targets import Address, check_targets, resolve

REDIS = "redis://localhost:6379/0"
NAMES = {
    "localhost": {"127.0.0.1", "::1"},
    "redis.internal": {"10.0.0.9"},
    "sneaky.example": {"127.0.0.1"},
    "sneaky6.example": {"::1"},
    "hooks.example.com": {"93.184.216.34"},
    "mixed.example": {"93.184.216.34", "10.1.1.1"},
}


def fake_resolver(host: str, port: int) -> set[Address]:
    """Names from NAMES, literals as themselves; anything else does not resolve."""
    if host in NAMES:
        return {ipaddress.ip_address(address) for address in NAMES[host]}
    try:
        return {ipaddress.ip_address(host)}
    except ValueError:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known") from None


def problems(urls: list[str], redis_url: str | None = REDIS, *, allow_private: bool = False) -> list[str]:
    return [
        f.problem for f in check_targets(urls, redis_url, allow_private=allow_private, resolver=fake_resolver)
    ]


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:6379/",
        "http://127.0.0.2:6379/",
        "http://localhost:6379/x?y=1",
        "http://[::1]:6379/",
        "http://[::ffff:127.0.0.1]:6379/",
        "http://0.0.0.0:6379/",
        "http://[::]:6379/",
        "https://sneaky.example:6379/",
        "http://sneaky6.example:6379/",
        "http://user:pw@127.0.0.1:6379/",
    ],
)
def test_any_spelling_of_this_machine_on_the_redis_port_is_the_redis_address(url: str) -> None:
    assert problems([url], "redis://127.0.0.1:6379/0") == ["redis"]
    assert problems([url], "redis://localhost") == ["redis"]  # the default port
    assert problems([url], "redis://[::1]:6379") == ["redis"]


def test_a_remote_redis_is_matched_by_its_own_addresses_and_port() -> None:
    redis = "rediss://:secret@redis.internal:6380/0"
    assert problems(["http://10.0.0.9:6380/"], redis) == ["redis"]
    assert problems(["http://redis.internal:6380/hook"], redis) == ["redis"]
    assert problems(["http://10.0.0.9:6379/", "http://10.0.0.9/"], redis) == ["private", "private"]
    assert problems(["http://127.0.0.1:6380/"], redis) == ["private"]  # another server than Redis


def test_the_redis_address_is_refused_even_when_private_targets_are_allowed() -> None:
    assert problems(["http://127.0.0.1:6379/"], allow_private=True) == ["redis"]


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/hook",
        "http://localhost/hook",
        "http://10.2.3.4/",
        "http://172.16.0.1/",
        "http://172.31.255.254/",
        "http://192.168.1.10/",
        "http://169.254.169.254/latest/meta-data",
        "http://[fe80::1%25eth0]/",
        "http://[fd12:3456::1]/",
        "http://[fc00::1]/",
        "http://0.0.0.0/",
        "http://[::]/",
        "http://[::ffff:10.0.0.1]/",
        "https://sneaky.example/",
        "https://mixed.example/",
    ],
)
def test_loopback_link_local_and_private_targets_are_warned_about_unless_allowed(url: str) -> None:
    assert problems([url]) == ["private"]
    assert problems([url], allow_private=True) == []


@pytest.mark.parametrize(
    "url",
    ["https://hooks.example.com/tg", "https://93.184.216.34/", "http://172.32.0.1/", "http://[2001:db8::1]/"],
)
def test_public_targets_pass(url: str) -> None:
    assert problems([url]) == []


def test_a_name_that_does_not_resolve_is_reported_not_refused() -> None:
    found = check_targets(["https://nowhere.invalid/"], REDIS, allow_private=False, resolver=fake_resolver)
    assert [f.problem for f in found] == ["unresolved"]
    assert "THREADGATE_WEBHOOKS" in found[0].sentence() and "nowhere.invalid" in found[0].sentence()


def test_the_sentence_names_the_setting_and_the_url_without_its_credentials() -> None:
    found = check_targets(
        ["http://user:pw@localhost:6379/?token=t"], REDIS, allow_private=False, resolver=fake_resolver
    )
    sentence = found[0].sentence()
    assert sentence.startswith("THREADGATE_WEBHOOKS entry http://localhost:6379/ ")
    assert "REDIS_URL" in sentence and "pw" not in sentence and "token" not in sentence
    assert "\n" not in sentence


def test_names_are_resolved_with_getaddrinfo_and_literals_taken_as_they_are() -> None:
    local = resolve("localhost", 80)
    assert local and all(address.is_loopback for address in local)
    assert resolve("10.0.0.1", 80) == {ipaddress.ip_address("10.0.0.1")}
    found = check_targets(["http://localhost:6379/"], "redis://127.0.0.1:6379", allow_private=False)
    assert [f.problem for f in found] == ["redis"]
