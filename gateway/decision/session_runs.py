"""The one run an agent session's questions share in its thread.

An integration (a hook, the MCP server, a framework adapter) asks each question in the session's run
instead of a run of its own, so a grant a person makes on one question ("approve for this session")
answers the session's later identical calls. The run is started on first use, and again when the one
stored has ended or was started for another agent or starter.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from gateway.base.errors import GatewayError
from gateway.base.ids import parse_thread_id
from gateway.base.models import Run, RunRequest, RunState

if TYPE_CHECKING:
    from gateway.decision.service import Gateway


def _fits(run: Run | None, request: RunRequest) -> bool:
    return (
        run is not None
        and run.state is RunState.RUNNING
        and run.agent == request.agent
        and run.started_by == request.started_by
    )


async def session_run(core: Gateway, session_key: str, request: RunRequest) -> tuple[Run, bool]:
    """The session's running run in ``request.thread_id`` and whether this call started it.

    Two processes starting it at once end up with one run: the second ends its own and takes the first's.
    """
    thread_id = parse_thread_id(request.thread_id).thread_id
    runs = core.store.session_runs
    current = await runs.get(thread_id, session_key)
    if current is not None:
        run = await core.store.get_run(current)
        if run is not None and _fits(run, request):
            return run, False
    fresh = await core.create_run(request)
    kept = await runs.adopt(thread_id, session_key, fresh.run_id, current)
    if kept == fresh.run_id:
        return fresh, True
    with contextlib.suppress(GatewayError):  # another process started the session's run first
        await core.end_run(fresh.run_id)
    other = await core.store.get_run(kept)
    if other is None or not _fits(other, request):  # it ended meanwhile: try once more, replacing it
        fresh = await core.create_run(request)
        await runs.adopt(thread_id, session_key, fresh.run_id, kept)
        return fresh, True
    return other, False
