"""``serve --workers``: how many (a number, or auto from the cores and a container's CPU quota), refused on
the embedded store, and the parent's rules for workers that exit: restarted, up to a limit."""

from __future__ import annotations

import socket
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.base.cores import MAX_WORKERS, usable_cores, worker_count
from gateway.cli import main
from gateway.process import workers
from gateway.process.commands import Exit
from gateway.process.workers import Supervisor, WorkerSeat, shared_dir


@pytest.mark.parametrize("given", ["0", "-1", "two", "1.5", str(MAX_WORKERS + 1), ""])
def test_a_worker_count_is_auto_or_a_number_in_range(given: str) -> None:
    with pytest.raises(ValueError, match="--workers takes auto or a number from 1 to 64"):
        worker_count(given)


def test_auto_is_the_cores_this_process_may_use() -> None:
    assert worker_count("auto") == worker_count(" AUTO ") == usable_cores() >= 1
    assert worker_count("3") == 3


@pytest.mark.parametrize(
    ("cpu_max", "ceiling"), [("150000 100000", 2), ("50000 100000", 1), ("max 100000", None), ("junk", None)]
)
def test_a_container_cpu_quota_lowers_auto(tmp_path: Path, cpu_max: str, ceiling: int | None) -> None:
    quota = tmp_path / "cpu.max"
    quota.write_text(cpu_max + "\n")
    cores = usable_cores(tmp_path / "missing")
    assert usable_cores(quota) == (min(cores, ceiling) if ceiling else cores)


def test_the_shared_metrics_go_to_memory_where_it_can_be_written(tmp_path: Path) -> None:
    memory = tmp_path / "shm"
    memory.mkdir()
    assert Path(shared_dir(memory)).parent == memory
    assert Path(shared_dir(tmp_path / "no-such-place")).parent == Path(tempfile.gettempdir())


def test_workers_are_refused_on_the_embedded_store_in_one_line(
    clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--port", "0", "--workers", "2"]) == Exit.USAGE
    err = capsys.readouterr().err
    assert (
        err
        == "threadgate: 2 workers need REDIS_URL: on the embedded store each would keep state of its own\n"
    )


def test_a_bad_workers_setting_is_a_bad_setting(
    clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    clean_env.setenv("THREADGATE_WORKERS", "many")
    assert main(["serve", "--port", "0"]) == Exit.USAGE
    assert "THREADGATE_WORKERS takes auto or a number from 1 to 64" in capsys.readouterr().err


# The parent alone, with workers that are a few lines of Python.

WORKER = """
import json, os, socket, sys, time
seat = sys.argv[1].split(":")
control = socket.socket(fileno=int(seat[2]))
control.sendall(json.dumps({"pid": os.getpid()}).encode() + b"\\n")
time.sleep(float(sys.argv[2]))
sys.exit(int(sys.argv[3]))
"""


def tiny_workers(lives_s: float, code: int) -> Callable[[WorkerSeat], list[str]]:
    """Workers that say they are ready, live ``lives_s`` seconds, then exit with ``code``."""
    return lambda seat: [sys.executable, "-c", WORKER, seat.argument(), str(lives_s), str(code)]


@pytest.fixture
def bound() -> Iterator[socket.socket]:
    """A bound loopback socket, as ``serve`` hands the parent."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock


@pytest.fixture
def logged(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    """The parent's log events, by name with their fields."""
    seen: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(workers, "event", lambda name, *_level, **fields: seen.append((name, fields)))
    return seen


def test_workers_that_keep_exiting_are_restarted_until_the_parent_gives_up_with_exit_1(
    bound: socket.socket, logged: list[tuple[str, dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(workers, "RESTART_DELAY_S", 0.05)
    announced: list[list[dict[str, Any]]] = []
    assert Supervisor(bound, 2, tiny_workers(0.5, 3), announced.append, stop_timeout_s=5).run() == 1
    assert len(announced) == 1 and len(announced[0]) == 2  # announced once, when both were first ready
    exits = [fields for name, fields in logged if name == "serve.worker_exited"]
    assert len(exits) == workers.RESTART_LIMIT and all(fields["code"] == 3 for fields in exits)
    assert [fields["restarting"] for fields in exits][-2:] == [True, False]
    assert len([name for name, _ in logged if name == "serve.worker_started"]) > 2  # some were restarted


def test_a_worker_that_exits_before_it_is_ready_stops_the_start_with_exit_1(
    bound: socket.socket, logged: list[tuple[str, dict[str, Any]]]
) -> None:
    def broken(seat: WorkerSeat) -> list[str]:
        return [sys.executable, "-c", "raise SystemExit(3)"]

    announced: list[list[dict[str, Any]]] = []
    assert Supervisor(bound, 2, broken, announced.append, stop_timeout_s=5).run() == 1
    assert announced == []
    assert [fields["code"] for name, fields in logged if name == "serve.worker_failed_to_start"] == [3]
