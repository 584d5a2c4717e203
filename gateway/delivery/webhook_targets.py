"""Where ``THREADGATE_WEBHOOKS`` may point: never at the gateway's own Redis, and inside the network only
when ``THREADGATE_WEBHOOKS_ALLOW_PRIVATE`` says so.

A webhook is a POST whose body the gateway writes from what people and agents typed: aimed at Redis (whose
text protocol skips the lines it cannot read), it runs commands there; aimed at a loopback, link-local or
private address, it reaches services the operator may not mean to expose. Host names are resolved once,
when the check runs (``threadgate serve`` starting, ``threadgate doctor``).
"""

from __future__ import annotations

import ipaddress
import logging
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from gateway.base.logs import event
from gateway.base.settings import Settings
from gateway.delivery.webhooks import target

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], set[Address]]

REDIS_PORT = 6379
WEB_PORTS = {"http": 80, "https": 443}
PRIVATE = tuple(
    ipaddress.ip_network(network)
    for network in (
        "127.0.0.0/8",
        "0.0.0.0/8",
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "169.254.0.0/16",
        "::1/128",
        "::/128",
        "fc00::/7",
        "fe80::/10",
    )
)
# What reaches this machine itself: a server listening on one of these is reached through any other.
THIS_MACHINE = tuple(
    ipaddress.ip_network(network) for network in ("127.0.0.0/8", "0.0.0.0/8", "::1/128", "::/128")
)


@dataclass(frozen=True, slots=True)
class Finding:
    """What is wrong with one webhook URL. ``redis`` refuses to start; the others are warnings."""

    problem: Literal["redis", "private", "unresolved"]
    url: str  # as logs show it: no credentials, no query
    addresses: tuple[str, ...] = ()

    def sentence(self) -> str:
        where = f"THREADGATE_WEBHOOKS entry {self.url}"
        if self.problem == "redis":
            return (
                f"{where} is the Redis server of REDIS_URL: deliveries would write into the gateway's own "
                "store. Remove it."
            )
        if self.problem == "private":
            return (
                f"{where} reaches a loopback, link-local or private address "
                f"({', '.join(self.addresses)}); if that receiver is meant to be inside your network, "
                "set THREADGATE_WEBHOOKS_ALLOW_PRIVATE=true"
            )
        return f"{where} does not resolve now, so where it leads could not be checked"


def resolve(host: str, port: int) -> set[Address]:
    """The addresses ``host`` names: an IP literal itself, a name through ``getaddrinfo``."""
    literal = _address(host)
    if literal is not None:
        return {literal}
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return {address for *_, sockaddr in found if (address := _address(str(sockaddr[0]))) is not None}


def _address(text: str) -> Address | None:
    try:
        return ipaddress.ip_address(text.split("%", 1)[0])  # a zone (fe80::1%eth0) changes nothing here
    except ValueError:
        return None


def _addresses(resolver: Resolver, host: str, port: int) -> set[Address]:
    """What ``host`` resolves to, IPv4-mapped IPv6 (``::ffff:127.0.0.1``) read as the IPv4 it maps."""
    found = resolver(host, port)
    return {
        (address.ipv4_mapped or address) if isinstance(address, ipaddress.IPv6Address) else address
        for address in found
    }


def _in(address: Address, networks: Iterable[ipaddress.IPv4Network | ipaddress.IPv6Network]) -> bool:
    return any(address.version == network.version and address in network for network in networks)


def _endpoint(url: str, default_port: int) -> tuple[str, int] | None:
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        return None
    if not parts.hostname:
        return None
    return parts.hostname, port or default_port


def _same_server(target: set[Address], redis: set[Address]) -> bool:
    if target & redis:
        return True
    return any(_in(a, THIS_MACHINE) for a in target) and any(_in(a, THIS_MACHINE) for a in redis)


def check_targets(
    urls: Iterable[str], redis_url: str | None, *, allow_private: bool, resolver: Resolver = resolve
) -> list[Finding]:
    """What is wrong with each webhook URL (an empty list when nothing is)."""
    redis: tuple[int, set[Address]] | None = None
    if redis_url and (endpoint := _endpoint(redis_url, REDIS_PORT)) is not None:
        try:
            redis = endpoint[1], _addresses(resolver, *endpoint)
        except (OSError, UnicodeError):
            redis = None
    findings: list[Finding] = []
    for url in urls:
        endpoint = _endpoint(url, WEB_PORTS.get(urlsplit(url).scheme, 80))
        if endpoint is None:
            continue  # not an http(s) URL: the dispatcher refuses it with its own sentence
        try:
            addresses = _addresses(resolver, *endpoint)
        except (OSError, UnicodeError):
            findings.append(Finding("unresolved", target(url)))
            continue
        shown = tuple(sorted(str(address) for address in addresses))
        if redis is not None and endpoint[1] == redis[0] and _same_server(addresses, redis[1]):
            findings.append(Finding("redis", target(url), shown))
        elif not allow_private and any(_in(address, PRIVATE) for address in addresses):
            findings.append(Finding("private", target(url), shown))
    return findings


def findings_of(settings: Settings, resolver: Resolver = resolve) -> list[Finding]:
    return check_targets(
        settings.webhook_urls(),
        settings.redis_url,
        allow_private=settings.threadgate_webhooks_allow_private,
        resolver=resolver,
    )


def refuse_or_warn(settings: Settings, resolver: Resolver = resolve) -> None:
    """At start: ValueError (one line) for a target on the Redis address, a log line for the others."""
    findings = findings_of(settings, resolver)
    for finding in findings:
        if finding.problem == "redis":
            raise ValueError(finding.sentence())
    for finding in findings:
        event(
            f"webhooks.{finding.problem}_target",
            logging.WARNING,
            target=finding.url,
            warning=finding.sentence(),
        )
