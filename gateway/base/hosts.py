"""Host names as a ``Host`` header or a setting spells them: port dropped, case and IPv6 spelling made one."""

from __future__ import annotations

import ipaddress
import re

_NAME = re.compile(r"[a-z0-9_]([a-z0-9_.-]{0,251}[a-z0-9_])?", re.ASCII)
_PORT = re.compile(r"[0-9]{0,5}", re.ASCII)
WILDCARDS = frozenset({"0.0.0.0", "::"})  # a bind address meaning every interface, not a name to reach


def host_name(value: str) -> str | None:
    """The name in ``value`` (``GW.example.com:8787`` → ``gw.example.com``, ``[::1]:80`` → ``::1``), or
    None when it names no host. A trailing dot is dropped; IP literals take their canonical form."""
    text = value.strip().lower()
    if text.startswith("["):
        end = text.find("]")
        rest = text[end + 1 :] if end > 0 else ":x"
        if rest and not (rest.startswith(":") and _PORT.fullmatch(rest[1:])):
            return None
        address = _address(text[1:end])
        return address if address is not None and ":" in address else None
    if text.count(":") > 1:  # a bare IPv6 literal (settings; a Host header brackets it)
        return _address(text)
    name, _, port = text.partition(":")
    if not _PORT.fullmatch(port):
        return None
    name = name[:-1] if name.endswith(".") else name
    if not _NAME.fullmatch(name):
        return None
    return _address(name) or name


def _address(text: str) -> str | None:
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        return None
