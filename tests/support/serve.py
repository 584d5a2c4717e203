"""``threadgate serve`` as a subprocess for the tests: a free port, a clean environment, a readiness wait."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.support import processes
from tests.support.redis_server import free_port

REPO = Path(__file__).resolve().parents[2]
SETTING_PREFIXES = ("SLACK_", "TELEGRAM_", "DISCORD_", "THREADGATE_", "REDIS_")


def serve_env(**settings: str) -> dict[str, str]:
    """This process's environment without any gateway, platform or Redis setting, plus ``settings``."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(SETTING_PREFIXES)}
    env["PYTHONPATH"] = str(REPO)
    env.update(settings)
    return env


def answers(url: str) -> bool:
    """Whether ``url`` answers 200 right now."""
    try:
        return httpx.get(url, timeout=0.5).status_code == 200
    except httpx.HTTPError:
        return False


@dataclass
class ServeProcess:
    """``threadgate serve`` on a fixed port (so it restarts in place), run in ``workdir`` (no ``.env``).

    Its stdout and stderr (the JSON log lines) go to ``log``.
    """

    env: dict[str, str]
    workdir: Path
    name: str = "serve"
    port: int = field(default_factory=free_port)
    program: tuple[str, ...] = (sys.executable, "-m", "gateway.cli")
    options: tuple[str, ...] = ()  # more ``serve`` options, such as ``--workers 2``
    popen: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.workdir / f"{self.name}.log"

    @property
    def running(self) -> subprocess.Popen[bytes]:
        """The launched process; an error if it was never launched or has been stopped."""
        if self.popen is None:
            raise RuntimeError(f"threadgate serve {self.name} is not running")
        return self.popen

    def start(self, ready_path: str = "/healthz") -> None:
        """Launch the process and wait until it answers ``ready_path``."""
        self.launch()
        self.wait_ready(ready_path)

    def launch(self) -> None:
        """Launch the process without waiting for it (``wait_ready`` does)."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        command = [*self.program, "serve", "--host", "127.0.0.1", "--port", str(self.port), *self.options]
        with self.log.open("ab") as log:
            self.popen = subprocess.Popen(
                command, cwd=self.workdir, env=self.env, stdout=log, stderr=subprocess.STDOUT
            )

    def wait_ready(self, path: str = "/healthz", timeout: float = 60.0) -> None:
        """Wait until ``path`` answers 200; fail with the log's end if the process exits first."""
        url = f"{self.url}{path}"
        processes.wait_until_answers(
            lambda: answers(url), self.running, f"threadgate serve {self.name}", self.log, timeout
        )

    def wait_workers(self, timeout: float = 120.0) -> None:
        """With ``--workers``: wait until the parent says every worker accepts connections (its
        ``Workers:`` line); ``/readyz`` answers as soon as the first one does."""
        processes.wait_until_answers(
            lambda: "\nWorkers: " in "\n" + processes.log_tail(self.log, 1_000_000),
            self.running,
            f"threadgate serve {self.name}'s workers",
            self.log,
            timeout,
        )

    def kill(self) -> None:
        """kill -9: no shutdown at all."""
        if self.popen is not None:
            processes.kill(self.popen)
            self.popen = None

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM, then kill -9 if it has not exited within ``timeout`` seconds."""
        if self.popen is not None:
            processes.stop(self.popen, timeout)
            self.popen = None


@contextmanager
def serving(*servers: ServeProcess, ready_path: str | None = "/healthz") -> Iterator[None]:
    """Start ``servers`` together, wait until each answers ``ready_path`` (if given); stop them all after."""
    try:
        for server in servers:
            server.launch()
        if ready_path is not None:
            for server in servers:
                server.wait_ready(ready_path)
        yield
    finally:
        for server in servers:
            server.stop()
