"""What the benchmark ran on: processor, cores, memory, load, Redis and Python versions."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from dataclasses import asdict, dataclass
from typing import Any


def _command(*words: str) -> str:
    if shutil.which(words[0]) is None:
        return ""
    return subprocess.run(words, capture_output=True, text=True, check=False).stdout


def _cpu_model() -> str:
    for line in _command("lscpu").splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown processor"


def _memory_total() -> str:
    for line in _command("free", "-h").splitlines():
        if line.startswith("Mem:"):
            return line.split()[1]
    return "unknown"


@dataclass(frozen=True, slots=True)
class Machine:
    cpu: str
    cores: int
    memory: str
    python: str
    redis: str
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float]

    def describe(self) -> str:
        return (
            f"{self.cpu}, {self.cores} cores, {self.memory} RAM; Redis {self.redis} (private, AOF everysec); "
            f"Python {self.python}. Load average (1, 5, 15 min) {_load(self.load_before)} before, "
            f"{_load(self.load_after)} after."
        )

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "load_before": list(self.load_before), "load_after": list(self.load_after)}


def _load(values: tuple[float, float, float]) -> str:
    return ", ".join(f"{value:.2f}" for value in values)


def describe_machine(redis_version: str, load_before: tuple[float, float, float]) -> Machine:
    return Machine(
        cpu=_cpu_model(),
        cores=os.cpu_count() or 0,
        memory=_memory_total(),
        python=platform.python_version(),
        redis=redis_version,
        load_before=load_before,
        load_after=os.getloadavg(),
    )
