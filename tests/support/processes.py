"""Child processes the tests own: wait until one answers, stop it, or kill -9 it."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path


def wait_until_answers(
    answers: Callable[[], bool],
    process: subprocess.Popen[bytes],
    what: str,
    log: Path,
    timeout: float = 60.0,
) -> None:
    """Poll ``answers`` until it is true; fail at once, with the end of ``log``, if ``process`` exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if answers():
            return
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}: {log_tail(log)}")
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not answer within {timeout} s: {log_tail(log)}")


def log_tail(log: Path, size: int = 2000) -> str:
    """The last ``size`` characters of ``log``, or a note that there is none yet."""
    try:
        return log.read_text(errors="replace")[-size:]
    except FileNotFoundError:
        return f"(no log at {log})"


def stop(process: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """SIGTERM and wait; kill -9 if it has not exited within ``timeout`` seconds."""
    if process.poll() is None:
        process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill(process)


def kill(process: subprocess.Popen[bytes]) -> None:
    """kill -9: no shutdown at all; the process is reaped."""
    process.kill()
    process.wait()
