"""An http(s) URL's scheme and host as a browser reads them (the WHATWG URL rules), for the subset a
URL step may use; anything a browser and a simple parser could read differently is refused.

Why not ``urllib``: ``urlsplit("http://evil.example\\@127.0.0.1/")`` says the host is 127.0.0.1, while a
browser treats ``\\`` as ``/`` and opens evil.example. Pure functions, linear in the URL.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

SCHEMES = ("http", "https")
_HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-._")
_IPV4_MAX = 2**32


class UrlError(ValueError):
    """A URL outside the unambiguous http(s) subset, with the reason."""


@dataclass(frozen=True, slots=True)
class WebUrl:
    """The parts that decide where a browser goes: the lowercased scheme and host, and the IP if any."""

    scheme: str
    host: str
    address: ipaddress.IPv4Address | ipaddress.IPv6Address | None = None

    @property
    def loopback(self) -> bool:
        """This machine: ``localhost`` (or a name under it), 127.0.0.0/8, or ``[::1]``."""
        if self.address is not None:
            return self.address.is_loopback and not (
                isinstance(self.address, ipaddress.IPv6Address) and self.address.ipv4_mapped
            )
        return self.host == "localhost" or self.host.endswith(".localhost")


def _ipv4_number(part: str) -> int | None:
    """One part of a WHATWG IPv4 host: ``0x`` hex, a leading ``0`` octal, else decimal; None if none."""
    if part[:2] in ("0x", "0X"):
        digits, base = part[2:], 16
    elif len(part) > 1 and part.startswith("0"):
        digits, base = part[1:], 8
    else:
        digits, base = part, 10
    if not digits:
        return 0  # "0x" alone is zero
    allowed = "0123456789abcdef"[:base]
    if not all(char in allowed for char in digits.lower()):
        return None
    return int(digits, base) if len(digits) <= 12 else _IPV4_MAX  # longer is out of range anyway


def _ends_in_number(labels: list[str]) -> bool:
    """The WHATWG rule that makes a host an IPv4 address: its last label is a number (or ``0x…``)."""
    last = labels[-1]
    return last.isascii() and (
        last.isdigit() or (last[:2] in ("0x", "0X") and _ipv4_number(last) is not None)
    )


def _ipv4(labels: list[str]) -> ipaddress.IPv4Address:
    """``127.1``, ``0x7f.0.0.1``, ``2130706433`` and the like, as the 32-bit address a browser uses."""
    if len(labels) > 4 or "" in labels:
        raise UrlError("the host looks like an IPv4 address but is not one")
    numbers = [_ipv4_number(label) for label in labels]
    if any(number is None for number in numbers):
        raise UrlError("the host looks like an IPv4 address but is not one")
    parts = [number for number in numbers if number is not None]
    if any(part > 255 for part in parts[:-1]) or parts[-1] >= 256 ** (5 - len(parts)):
        raise UrlError("the host is an IPv4 address out of range")
    value = parts[-1]
    for index, part in enumerate(parts[:-1]):
        value += part << (8 * (3 - index))
    return ipaddress.IPv4Address(value)


def _host(text: str) -> tuple[str, ipaddress.IPv4Address | ipaddress.IPv6Address | None]:
    """The host as a browser reads it: an IPv6 literal, an IPv4 address in any of its forms, or a name."""
    if text.startswith("["):
        if not text.endswith("]") or "%" in text:
            raise UrlError("the host is not a plain IPv6 address in brackets")
        try:
            address = ipaddress.IPv6Address(text[1:-1])
        except ValueError:
            raise UrlError("the host is not a valid IPv6 address") from None
        return text.lower(), address
    host = text.lower()
    if not host or not set(host) <= _HOST_CHARS:
        raise UrlError(
            "the host must be letters, digits, '-', '_' and '.' only (no '%', no other characters)"
        )
    labels = host.split(".")
    if labels[-1] == "" and len(labels) > 1:
        labels = labels[:-1]  # "127.0.0.1." is 127.0.0.1 to a browser
    if _ends_in_number(labels):
        ipv4 = _ipv4(labels)
        return str(ipv4), ipv4
    return host, None


def parse_web_url(url: str) -> WebUrl:
    """The scheme and host a browser would open for ``url``; UrlError for anything outside the subset.

    Refused: characters a browser drops or rewrites (white space, controls, ``\\``, non-ASCII in the
    authority), a scheme other than http(s), anything but ``//`` after it, userinfo (``@``), ``%`` in
    the host, a port that is not a number up to 65535.
    """
    if any(char <= " " or char == "\x7f" for char in url):
        raise UrlError("the URL holds white space or control characters (tabs and newlines included)")
    if "\\" in url:
        raise UrlError("the URL holds a backslash, which browsers read as '/'")
    scheme, colon, rest = url.partition(":")
    scheme = scheme.lower()
    if not colon or scheme not in SCHEMES:
        raise UrlError("the URL must start with https:// or http://")
    if not rest.startswith("//") or rest.startswith("///"):
        raise UrlError(f"the URL must start with {scheme}:// and a host")
    authority = rest[2:]
    for end in "/?#":
        authority = authority.partition(end)[0]
    if not authority.isascii():
        raise UrlError("the host must be ASCII (write an international name in its xn-- form)")
    if "@" in authority:
        raise UrlError("the URL must not carry a user name or password ('@' before the host)")
    host_text, port = authority, ""
    if authority.startswith("["):
        close = authority.find("]")
        host_text, port = authority[: close + 1], authority[close + 1 :]
        if close < 0 or (port and not port.startswith(":")):
            raise UrlError("the host is not a plain IPv6 address in brackets")
        port = port[1:]
    elif ":" in authority:
        host_text, _, port = authority.partition(":")
    if port and not (port.isascii() and port.isdigit() and len(port) <= 5 and int(port) <= 65535):
        raise UrlError("the port must be a number up to 65535")
    host, address = _host(host_text)
    return WebUrl(scheme, host, address)
