"""``threadgate push keys``: a new VAPID key pair for Web Push (docs/push.md)."""

from __future__ import annotations

import argparse
from typing import Any

from gateway.base import vapid
from gateway.process.commands import Exit, emit_json


def keys_command(args: argparse.Namespace) -> int:
    private, public = vapid.new_pair()
    if args.json:
        emit_json({"private_key": private, "public_key": public})
        return Exit.OK
    print(f"THREADGATE_VAPID_PRIVATE_KEY={private}")
    print(f"# public key (browsers subscribe with it; GET /v1/me/push gives it too): {public}")
    print("# also set THREADGATE_VAPID_SUBJECT=mailto:<an address push services may write to>")
    return Exit.OK


def add_parsers(commands: Any) -> None:
    push = commands.add_parser(
        "push",
        help="Web Push: print a new VAPID key pair",
        description="Web Push to signed-in people's browsers (docs/push.md).",
    )
    actions = push.add_subparsers(dest="action", required=True, metavar="ACTION")
    keys = actions.add_parser(
        "keys",
        help="print a new VAPID key pair as settings",
        description="Print a new VAPID key pair: the private key as THREADGATE_VAPID_PRIVATE_KEY "
        "(base64url of its raw 32 bytes) and the public key. Keep the private key secret; changing it "
        "makes every browser subscribe again.",
    )
    keys.add_argument("--json", action="store_true", help="print JSON for scripts")
    keys.set_defaults(handler=keys_command)
