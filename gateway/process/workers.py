"""``serve --workers N``: N gateway processes serving one listening socket, under one supervising parent.

The parent binds the address and checks Redis (as a single ``serve`` does), then starts N workers. Each is
a whole gateway (``serve --worker …``) that accepts on the inherited socket; the kernel hands each new
connection to one of them. All state is in Redis, so any worker serves any request; what must run once
per deployment (a bot's long-lived platform connection) is held under a Redis lease, as across hosts.

Each worker holds one end of a socket pair with the parent: it writes one JSON line there once it accepts
connections, and stops gracefully when the parent's end closes (the parent died). The parent forwards
SIGTERM and SIGINT to every worker and waits for them; a worker that exits on its own is logged and
started again, unless workers keep exiting (``RESTART_LIMIT`` within ``RESTART_WINDOW_S``), when the
parent stops them all and exits 1 for the service manager to see.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from gateway.base.logs import event

RESTART_LIMIT = 5  # worker exits within the window after which the parent gives up
RESTART_WINDOW_S = 60.0
RESTART_DELAY_S = 1.0
STOP_MARGIN_S = 20.0  # beyond the shutdown grace: a worker's outbox flush and lease hand-over
POLL_S = 0.5
CLEAN_EXITS = {0, -signal.SIGTERM, -signal.SIGINT, 128 + signal.SIGINT}
FORWARDED = (signal.SIGTERM, signal.SIGINT)
METRICS_DIR = "PROMETHEUS_MULTIPROC_DIR"  # where the workers' metrics are shared (prometheus_client's)


@dataclass(frozen=True, slots=True)
class WorkerSeat:
    """What a worker process is handed: its number, the listening socket and its end of the pair."""

    index: int
    listen_fd: int
    control_fd: int

    def argument(self) -> str:
        return f"{self.index}:{self.listen_fd}:{self.control_fd}"

    @classmethod
    def parse(cls, text: str) -> WorkerSeat:
        index, listen_fd, control_fd = (int(part) for part in text.split(":"))
        return cls(index, listen_fd, control_fd)


def report_ready(control: socket.socket, **facts: Any) -> None:
    """Worker side: tell the parent this worker accepts connections (one JSON line)."""
    control.sendall(json.dumps({"pid": os.getpid(), **facts}).encode() + b"\n")


@dataclass
class _Worker:
    index: int
    process: subprocess.Popen[bytes]
    control: socket.socket  # the parent's end of the pair
    ready: dict[str, Any] | None = None  # its ready line, once sent
    buffer: bytes = b""


class Supervisor:
    """Parent side: start ``count`` workers on ``sock``, keep them running, stop them on a signal.

    ``command(seat)`` is a worker's command line; ``announce(ready)`` runs once every worker first
    accepts connections, with their ready lines in worker order.
    """

    def __init__(
        self,
        sock: socket.socket,
        count: int,
        command: Callable[[WorkerSeat], list[str]],
        announce: Callable[[list[dict[str, Any]]], None],
        stop_timeout_s: float,
        clock: Callable[[], float] = time.monotonic,
        metrics_dir: str = "",
    ) -> None:
        self.sock = sock
        self.count = count
        self.command = command
        self.announce = announce
        self.stop_timeout_s = stop_timeout_s
        self.clock = clock
        self.workers: dict[int, _Worker] = {}
        self.exits: list[float] = []  # when workers exited on their own, within the window
        self.signals: list[int] = []  # received, in order: each is forwarded to every worker
        self.announced = False
        self.metrics_dir = metrics_dir  # the workers' shared metrics files, removed at the end
        self.selector = selectors.DefaultSelector()

    def run(self) -> int:
        """Supervise until stopped: 0 when every worker stopped cleanly on a signal, else 1."""
        self.metrics_dir = self.metrics_dir or shared_dir()
        wake_read, wake_write = socket.socketpair()
        wake_read.setblocking(False)
        wake_write.setblocking(False)
        self.selector.register(wake_read, selectors.EVENT_READ)
        previous_fd = signal.set_wakeup_fd(wake_write.fileno(), warn_on_full_buffer=False)
        previous = {sig: signal.signal(sig, self._on_signal) for sig in FORWARDED}
        try:
            for index in range(self.count):
                self._start(index)
            return self._supervise(wake_read)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            signal.set_wakeup_fd(previous_fd)
            self._kill_all()
            self.selector.close()
            wake_read.close()
            wake_write.close()
            shutil.rmtree(self.metrics_dir, ignore_errors=True)

    def _on_signal(self, sig: int, frame: FrameType | None) -> None:
        self.signals.append(sig)

    def _start(self, index: int) -> None:
        parent_end, child_end = socket.socketpair()
        seat = WorkerSeat(index, self.sock.fileno(), child_end.fileno())
        with child_end:
            process = subprocess.Popen(
                self.command(seat),
                pass_fds=(seat.listen_fd, seat.control_fd),
                env={**os.environ, METRICS_DIR: self.metrics_dir},
                # Its own process group: a Ctrl-C in a terminal reaches the parent alone, which forwards it.
                process_group=0,
            )
        parent_end.setblocking(False)
        worker = _Worker(index, process, parent_end)
        self.workers[index] = worker
        self.selector.register(parent_end, selectors.EVENT_READ, worker)
        event("serve.worker_started", worker=index, pid=process.pid)

    def _supervise(self, wake: socket.socket) -> int:
        restarts: dict[int, float] = {}  # worker number → when to start it again
        while True:
            for key, _ in self.selector.select(POLL_S):
                if key.fileobj is wake:
                    with contextlib.suppress(BlockingIOError):
                        wake.recv(256)
                else:
                    self._read(key.data)
            if self.signals:
                return self._stop()
            for worker in list(self.workers.values()):
                if (code := worker.process.poll()) is None:
                    continue
                self._forget(worker)
                if not self.announced:
                    event("serve.worker_failed_to_start", logging.ERROR, worker=worker.index, code=code)
                    self._stop()
                    return 1
                now = self.clock()
                self.exits = [at for at in self.exits if now - at < RESTART_WINDOW_S] + [now]
                again = len(self.exits) < RESTART_LIMIT
                event(
                    "serve.worker_exited",
                    logging.ERROR,
                    worker=worker.index,
                    pid=worker.process.pid,
                    code=code,
                    restarting=again,
                )
                if not again:
                    self._stop()
                    return 1
                restarts[worker.index] = now + RESTART_DELAY_S
            for index, at in list(restarts.items()):
                if self.clock() >= at:
                    del restarts[index]
                    self._start(index)

    def _read(self, worker: _Worker) -> None:
        try:
            data = worker.control.recv(4096)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:  # the worker is gone: the loop's poll reports it
            with contextlib.suppress(KeyError, ValueError):
                self.selector.unregister(worker.control)
            return
        worker.buffer += data
        if worker.ready is None and b"\n" in worker.buffer:
            line, worker.buffer = worker.buffer.split(b"\n", 1)
            try:
                worker.ready = dict(json.loads(line))
            except (ValueError, TypeError):  # said it is ready, if not in so many words
                worker.ready = {}
            event("serve.worker_ready", worker=worker.index, pid=worker.process.pid)
        if not self.announced and all(w.ready is not None for w in self.workers.values()):
            self.announced = True
            self.announce([self.workers[index].ready or {} for index in sorted(self.workers)])

    def _forget(self, worker: _Worker) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(worker.control)
        worker.control.close()
        self.workers.pop(worker.index, None)
        _mark_dead(worker.process.pid, self.metrics_dir)

    def _stop(self) -> int:
        """Forward the stop to every worker (SIGTERM unless a signal asked for it; each further signal
        too) and wait for them: 0 when all exited cleanly within ``stop_timeout_s``, else 1 (the rest are
        killed)."""
        self.sock.close()  # no worker starts again: new connections are refused once the workers close theirs
        if not self.signals:
            self.signals.append(signal.SIGTERM)
        deadline = self.clock() + self.stop_timeout_s
        sent, clean = 0, True
        while self.workers and self.clock() < deadline:
            for sig in self.signals[sent:]:
                for worker in self.workers.values():
                    with contextlib.suppress(ProcessLookupError):
                        worker.process.send_signal(sig)
                sent += 1
            time.sleep(0.05)
            for worker in list(self.workers.values()):
                if (code := worker.process.poll()) is not None:
                    clean = clean and code in CLEAN_EXITS
                    self._forget(worker)
        if self.workers:
            event("serve.workers_killed", logging.ERROR, workers=sorted(self.workers))
            return 1
        return 0 if clean else 1

    def _kill_all(self) -> None:
        for worker in list(self.workers.values()):
            with contextlib.suppress(ProcessLookupError):
                worker.process.kill()
            worker.process.wait()
            self._forget(worker)


def shared_dir(memory: Path = Path("/dev/shm")) -> str:
    """A new directory for the workers' shared metrics files: in shared memory where it can be written
    (a container's read-only root filesystem leaves it writable), else in the temporary directory."""
    where = str(memory) if memory.is_dir() and os.access(memory, os.W_OK) else None
    return tempfile.mkdtemp(prefix="threadgate-metrics-", dir=where)


def _mark_dead(pid: int, metrics_dir: str) -> None:
    """Drop a gone worker's live gauges (open streams, leases held) from the shared metrics."""
    from prometheus_client import multiprocess

    with contextlib.suppress(OSError):
        multiprocess.mark_process_dead(pid, metrics_dir)  # type: ignore[no-untyped-call]


def worker_command(seat: WorkerSeat, host: str, port: int) -> list[str]:
    """The command line of one worker: this interpreter running ``threadgate serve`` as worker ``seat``."""
    return [
        sys.executable, "-m", "gateway.cli", "serve", "--host", host, "--port", str(port),
        "--worker", seat.argument(),
    ]  # fmt: skip
