"""The hooks' outputs checked against the tools' published schemas (see fixtures/README.md)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft7Validator

FIXTURES = Path(__file__).parent / "fixtures"
OUTPUT_SCHEMAS = {
    ("claude", "PermissionRequest"): "claude/hook-output.schema.json",
    ("claude", "PreToolUse"): "claude/hook-output.schema.json",
    ("claude", "Elicitation"): "claude/hook-output.schema.json",
    ("codex", "PermissionRequest"): "codex/permission-request.command.output.schema.json",
    ("codex", "PreToolUse"): "codex/pre-tool-use.command.output.schema.json",
}


@cache
def validator(path: str) -> Draft7Validator:
    schema = json.loads((FIXTURES / path).read_text())
    Draft7Validator.check_schema(schema)
    return Draft7Validator(schema)


def check_output(tool: str, event: str, output: dict[str, Any]) -> None:
    """Fail with every schema error when ``output`` is not what ``tool`` accepts for ``event``."""
    errors = [error.message for error in validator(OUTPUT_SCHEMAS[(tool, event)]).iter_errors(output)]
    assert not errors, f"{tool} {event} output {output} breaks its schema: {errors}"


def printed(tool: str, event: str, stdout: str) -> dict[str, Any] | None:
    """The hook's stdout parsed and checked against the schema; None when it printed nothing."""
    if not stdout.strip():
        return None
    output: dict[str, Any] = json.loads(stdout)
    check_output(tool, event, output)
    return output
