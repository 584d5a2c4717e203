"""A private redis-server for the test session: a free port, a temp dir, AOF on. Never the shared 6379."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path


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
        )
        self._wait_ready()

    def _wait_ready(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(64).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited: see {self.directory / 'redis.log'}")
            time.sleep(0.05)
        raise RuntimeError("redis-server did not answer PING in time")

    def kill(self) -> None:
        """kill -9: no shutdown, no final fsync."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None

    def flush(self) -> None:
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock:
            sock.sendall(b"FLUSHALL\r\n")
            sock.recv(64)


def require_real_redis() -> bool:
    """Under CI=true a test that needs a real Redis may never be skipped: missing redis-server fails."""
    return os.environ.get("CI", "").lower() == "true"
