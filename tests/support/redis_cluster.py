"""A private 3-master Redis Cluster for the test session: three loopback redis-servers in a temp dir."""

from __future__ import annotations

import random
import shutil
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.redis_server import redis_server_binary

BUS_OFFSET = 10_000  # a cluster node also listens on port + 10000 for its cluster bus


def redis_cli_binary() -> str | None:
    return shutil.which("redis-cli")


def _is_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def free_node_port() -> int:
    """A free port whose cluster-bus port (port + 10000) is free and valid too."""
    for _ in range(200):
        port = random.randint(20_000, 50_000)
        if _is_free(port) and _is_free(port + BUS_OFFSET):
            return port
    raise RuntimeError("no free port pair for a cluster node on 127.0.0.1")


def _command(port: int, *words: str) -> bytes:
    """Send one inline command to a node; returns the raw reply (enough for PING, FLUSHALL, CLUSTER INFO)."""
    with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
        sock.sendall((" ".join(words) + "\r\n").encode())
        return sock.recv(4096)


@dataclass
class RedisCluster:
    """Three masters, no replicas, all slots covered. ``url`` is the gateway's ``redis+cluster://`` form."""

    directory: Path
    ports: list[int] = field(default_factory=lambda: [free_node_port() for _ in range(3)])
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"redis+cluster://127.0.0.1:{self.ports[0]}/0"

    def start(self) -> None:
        binary, cli = redis_server_binary(), redis_cli_binary()
        if binary is None or cli is None:
            raise RuntimeError("redis-server and redis-cli are needed (Debian package redis-server)")
        for port in self.ports:
            node = self.directory / str(port)
            node.mkdir(parents=True, exist_ok=True)
            self.processes.append(
                subprocess.Popen(
                    [
                        binary,
                        "--port",
                        str(port),
                        "--bind",
                        "127.0.0.1",
                        "--dir",
                        str(node),
                        "--cluster-enabled",
                        "yes",
                        "--cluster-config-file",
                        "nodes.conf",
                        "--cluster-node-timeout",
                        "2000",
                        "--appendonly",
                        "no",
                        "--save",
                        "",
                        "--protected-mode",
                        "no",
                        "--logfile",
                        str(node / "redis.log"),
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        for port in self.ports:
            self._wait(lambda port=port: _command(port, "PING").startswith(b"+PONG"), "answer PING")
        nodes = [f"127.0.0.1:{port}" for port in self.ports]
        subprocess.run(
            [cli, "--cluster", "create", *nodes, "--cluster-replicas", "0", "--cluster-yes"],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=30,
        )
        for port in self.ports:
            self._wait(lambda port=port: b"cluster_state:ok" in _command(port, "CLUSTER", "INFO"), "agree")

    def _wait(self, ready: Callable[[], bool], what: str, timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if ready():
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"the test cluster's nodes did not {what} in time: see {self.directory}")

    def flush(self) -> None:
        for port in self.ports:
            _command(port, "FLUSHALL")

    def stop(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.processes.clear()
