"""A plain Python script whose risky function runs only once a person approves the exact call in chat.

Run a gateway (``threadgate serve``), then::

    export THREADGATE_URL=http://127.0.0.1:8787 THREADGATE_TOKEN=<an agent token>
    export THREADGATE_SESSION_CHANNEL=slack:C0456     # or telegram:-100123, discord:<id>, web:ops
    export THREADGATE_STARTED_BY=slack:U0123ABC      # who may answer (plus the agent's approvers)
    python examples/require_approval.py

The person may edit the call before approving (``editable=True``: type ``cascade: false``), and the
function then runs with the call as they edited it. Deny raises ApprovalDenied (who, why, and the
person's own reason in note); a gateway that cannot be reached raises HumanUnavailable, which is never a
denial: the script says so and stops.
"""

from __future__ import annotations

import sys

from gateway.client import ApprovalDenied, HumanUnavailable, ask_human, require_approval


@require_approval(editable=True)
def drop_table(name: str, *, cascade: bool = False) -> str:
    # Runs only after Approve, with exactly the arguments shown in the chat, or as the person edited them.
    return f"dropped {name}" + (" and everything that depended on it" if cascade else "")


def main() -> int:
    table = ask_human("Which table should go?", ["sessions_old", "events_2023"])
    try:
        print(drop_table(table, cascade=True))
    except ApprovalDenied as denied:
        print(f"Not dropped: {denied.why}" + ("" if denied.note else "."))
    except HumanUnavailable as unavailable:
        print(f"Nobody could decide ({unavailable.reason}); nothing was dropped.")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
