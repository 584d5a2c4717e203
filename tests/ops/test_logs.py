"""Structured logs: one JSON object per line, dotted event names, ids where they apply, no secrets."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import ValidationError

from gateway.channel import Channels
from gateway.logs import LOGGER, SERVER_LOGGERS, configure, event
from gateway.models import PromptRequest, RunRequest
from gateway.service import Gateway
from gateway.settings import Settings
from gateway.store import Store, connect
from tests.support.memory_channel import MemoryChannel

THREAD = "slack:C0456:1712345678.000100"
ALICE = "slack:UALICE"
QUESTION = {"kind": "text", "questions": [{"question": "Which branch?"}]}


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    """configure() rewires process-wide loggers; put them back for the other tests."""
    names = (LOGGER.name, *SERVER_LOGGERS)
    saved = {
        n: (logging.getLogger(n).handlers[:], logging.getLogger(n).level, logging.getLogger(n).propagate)
        for n in names
    }
    yield
    for name, (handlers, level, propagate) in saved.items():
        logger = logging.getLogger(name)
        logger.handlers[:], logger.level, logger.propagate = handlers, level, propagate


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
