"""Structured logs: one JSON object per line, dotted event names, ids where they apply, no secrets."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import threading
import warnings
from typing import Any

import pytest
from pydantic import ValidationError

from gateway.base.logs import configure, event, observe_loop
from gateway.base.models import PromptRequest, RunRequest
from gateway.base.settings import Settings
from gateway.decision.service import Gateway
from gateway.delivery.channel import Channels
from gateway.store import Store, connect
from tests.support.memory_channel import MemoryChannel

THREAD = "slack:C0456:1712345678.000100"
ALICE = "slack:UALICE"
QUESTION = {"kind": "text", "questions": [{"question": "Which branch?"}]}


def lines(err: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in err.splitlines() if line.strip()]


def test_each_event_is_one_json_line_with_a_dotted_name_and_utc_time(
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure("INFO")
    event("startup.store", store="Redis at redis://127.0.0.1:6379/0")
    [line] = lines(capsys.readouterr().err)
    assert line["event"] == "startup.store"
    assert line["level"] == "info"
    assert line["ts"].endswith("+00:00")
    assert line["store"] == "Redis at redis://127.0.0.1:6379/0"


def test_secrets_never_reach_a_log_line(capsys: pytest.CaptureFixture[str]) -> None:
    configure("INFO")
    # Built at run time so no token-shaped literal sits in the repository.
    secrets = {
        "slack": "-".join(("xoxb", "1234567890", "0987654321", "AbCdEfGhIjKl")),
        "telegram": ":".join(("123456789", "AAE" + "abcdefghijklmnopqrstuvwxyz0123456")),
        "discord": "MTA5ODc2NTQzMjEwOTg3NjU0.GAbcde.abcdefghijklmnopqrstuvwxyz0123",
        "bearer": "Bearer s3cr3t-api-token",
    }
    event("channel.failed", error=f"refused {secrets}", url="rediss://user:hunter2@redis.internal:6380/0")
    err = capsys.readouterr().err
    for secret in (*secrets.values(), "hunter2"):
        assert secret not in err
    assert "rediss://user:***@redis.internal:6380/0" in err


def test_log_level_comes_from_settings(capsys: pytest.CaptureFixture[str]) -> None:
    settings = Settings(_env_file=None, threadgate_log_level="warning")  # type: ignore[call-arg]
    configure(settings.threadgate_log_level)
    event("prompt.raised", prompt_id="prm_1")
    event("outbox.post_failed", logging.WARNING, thread_id=THREAD)
    assert [line["event"] for line in lines(capsys.readouterr().err)] == ["outbox.post_failed"]


def test_an_unknown_log_level_is_refused_with_the_levels_to_choose_from() -> None:
    with pytest.raises(ValidationError, match="DEBUG, INFO, WARNING, ERROR, CRITICAL"):
        Settings(_env_file=None, threadgate_log_level="verbose")  # type: ignore[call-arg]


def test_the_http_servers_warnings_are_json_lines_too(capsys: pytest.CaptureFixture[str]) -> None:
    configure("INFO")
    logging.getLogger("uvicorn.error").warning("Invalid HTTP request received.")
    [line] = lines(capsys.readouterr().err)
    assert (line["event"], line["logger"], line["level"]) == (
        "Invalid HTTP request received.",
        "uvicorn.error",
        "warning",
    )


async def test_prompt_lines_carry_the_prompt_thread_and_run_ids(capsys: pytest.CaptureFixture[str]) -> None:
    configure("DEBUG")
    gateway = Gateway(Store(connect(None).client), Channels([MemoryChannel("slack")]), sweep_interval=3600)
    await gateway.start()
    try:
        run = await gateway.create_run(RunRequest(thread_id=THREAD, agent="ops", started_by=ALICE))
        first = await gateway.raise_prompt(run.run_id, PromptRequest.model_validate(QUESTION))
        second = await gateway.raise_prompt(run.run_id, PromptRequest.model_validate(QUESTION))
        await gateway.answer(second.prompt_id, ALICE, text="main")
        third = await gateway.raise_prompt(run.run_id, PromptRequest.model_validate(QUESTION))
        await gateway.cancel_prompt(third.prompt_id, "not needed")
        await gateway.raise_prompt(run.run_id, PromptRequest.model_validate(QUESTION))
        await gateway.end_run(run.run_id)
        await gateway.outbox.idle()
    finally:
        await gateway.stop()
    prompt_lines = [line for line in lines(capsys.readouterr().err) if line["event"].startswith("prompt.")]
    assert {line["event"] for line in prompt_lines} == {
        "prompt.raised",
        "prompt.superseded",
        "prompt.answered",
        "prompt.cancelled",
    }
    for line in prompt_lines:
        assert line["prompt_id"].startswith("prm_"), line
        assert line["thread_id"] == THREAD, line
        assert line["run_id"] == run.run_id, line
    assert first.prompt_id in {line["prompt_id"] for line in prompt_lines}


def test_a_librarys_error_is_one_json_line_with_its_traceback_folded_into_one_field(
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure("INFO")
    logging.getLogger("slack_bolt.AsyncApp").info("below WARNING: libraries are quiet")
    try:
        {}["event"]
    except KeyError:
        logging.getLogger("slack_bolt.AsyncApp").exception("Failed to run a middleware function")
    err = capsys.readouterr().err
    [line] = lines(err)
    assert (line["event"], line["logger"], line["level"], line["error"]) == (
        "Failed to run a middleware function",
        "slack_bolt.AsyncApp",
        "error",
        "KeyError",
    )
    assert "Traceback" in line["exc"] and len(err.splitlines()) == 1


def test_a_librarys_message_is_cut_short_so_no_payload_is_dumped(capsys: pytest.CaptureFixture[str]) -> None:
    configure("INFO")
    logging.getLogger("telegram.Bot").critical("Received data was %r", [{"text": "x" * 10_000}])
    [line] = lines(capsys.readouterr().err)
    assert len(line["event"]) <= 501


def test_python_warnings_and_crashed_threads_are_json_lines(capsys: pytest.CaptureFixture[str]) -> None:
    configure("INFO")
    warnings.warn("a library's deprecation", DeprecationWarning, stacklevel=1)
    crashing = threading.Thread(target=lambda: 1 / 0, name="worker")
    crashing.start()
    crashing.join()
    warned, crashed = lines(capsys.readouterr().err)
    assert warned["logger"] == "py.warnings" and "a library's deprecation" in warned["event"]
    assert (crashed["event"], crashed["thread"], crashed["error"]) == (
        "thread.crashed",
        "worker",
        "ZeroDivisionError",
    )


async def test_a_task_that_dies_with_nobody_awaiting_it_is_one_json_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure("INFO")
    loop = asyncio.get_running_loop()
    saved = loop.get_exception_handler()
    observe_loop(loop)

    async def drain() -> None:
        raise ConnectionError("Connection closed by server.")

    task = asyncio.create_task(drain(), name="threadgate.outbox.drain")
    await asyncio.wait({task})
    del task
    gc.collect()  # the loop reports an exception nobody retrieved when the task is collected
    loop.set_exception_handler(saved)
    [line] = lines(capsys.readouterr().err)
    assert (line["event"], line["task"], line["error"]) == (
        "asyncio.unobserved_error",
        "threadgate.outbox.drain",
        "ConnectionError",
    )
    assert line["message"] == "Task exception was never retrieved"
    assert "Traceback" in line["traceback"]
