"""A private redis-server for the test session: a free port, a temp dir, AOF on. Never the shared 6379."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from tests.support import processes


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def redis_server_binary() -> str | None:
    return shutil.which("redis-server")


@dataclass
class RedisServer:
    """A redis-server process the tests own. ``kill()`` is kill -9; ``start()`` restarts on the same dir."""

    directory: Path
    port: int = field(default_factory=free_port)
    appendfsync: str = "everysec"
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = redis_server_binary()
        if binary is None:
            raise RuntimeError("redis-server is not installed (Debian package redis-server)")
        self.directory.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [
                binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.directory),
                "--appendonly", "yes", "--appendfsync", self.appendfsync, "--save", "",
                "--protected-mode", "no", "--logfile", str(self.directory / "redis.log"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        self._wait_ready()

    def _wait_ready(self, timeout: float = 10.0) -> None:
        assert self.process is not None
        processes.wait_until_answers(
            self._pong, self.process, "redis-server", self.directory / "redis.log", timeout
        )

    def _pong(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(64).startswith(b"+PONG")
        except OSError:
            return False

    def restart_empty(self) -> None:
        """Start again on the same port with nothing on disk (a replacement node, a lost volume)."""
        for entry in self.directory.iterdir():
            if entry.is_dir():
                shutil.rmtree(entry)
            elif entry.name != "redis.log":
                entry.unlink()
        self.start()

    def kill(self) -> None:
        """kill -9: no shutdown, no final fsync."""
        if self.process is not None:
            processes.kill(self.process)
            self.process = None

    def stop(self) -> None:
        if self.process is not None:
            processes.stop(self.process, timeout=5)
            self.process = None

    def flush(self) -> None:
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock:
            sock.sendall(b"FLUSHALL\r\n")
            sock.recv(64)


def require_real_redis() -> bool:
    """Under CI=true a test that needs a real Redis may never be skipped: missing redis-server fails."""
    return os.environ.get("CI", "").lower() == "true"


def killable_redis(directory: Path) -> RedisServer:
    """A started redis-server a test may kill: its own port and directory, every write fsynced to the AOF.
    Skips the test where redis-server is missing (fails it under CI=true)."""
    import pytest

    if redis_server_binary() is None:
        if require_real_redis():
            pytest.fail("CI=true and redis-server is missing: install the redis-server package")
        pytest.skip("redis-server is not installed")
    server = RedisServer(directory, appendfsync="always")
    server.start()
    return server
