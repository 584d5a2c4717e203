"""The core names no platform: every platform word and thread or identity literal lives in its plugin."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gateway.delivery.plugins import specs

ROOT = Path(__file__).resolve().parents[2]
# Platforms that might be installed or written about, beyond the ones registered here.
WORDS = {"slack", "telegram", "discord", "teams", "web"}
# Names of standards that happen to contain a platform word (the W3C's Web Push protocol is no platform).
STANDARDS = re.compile(r"\bWeb Push\b", re.IGNORECASE)
# Platform names that are also the core's own words: a person's email address is the core's (people,
# sign-in), so only the email platform's ids (``"email:``) are kept out of it.
COMMON = {"email"}


def core_files() -> list[Path]:
    return sorted((ROOT / "gateway").rglob("*.py"))


def words() -> set[str]:
    return (WORDS | {spec.name for spec in specs()}) - COMMON


def literals(name: str) -> re.Pattern[str]:
    """``"<name>:``, ``'<name>:`` and ``<name>:<``: a thread id or identity spelled out in the core."""
    quoted = re.escape(name)
    return re.compile(rf"""["']{quoted}:|\b{quoted}:<""", re.IGNORECASE)


def findings(text: str, names: set[str], forms: list[re.Pattern[str]]) -> list[str]:
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        words_of = STANDARDS.sub("", line)
        for name in sorted(names):
            if re.search(rf"\b{re.escape(name)}\b", words_of, re.IGNORECASE):
                found.append(f"{number}: {name}: {line.strip()}")
        found += [f"{number}: {form.pattern}: {line.strip()}" for form in forms if form.search(line)]
    return found


def test_no_core_module_names_a_platform_or_spells_its_ids() -> None:
    forms = [literals(spec.name) for spec in specs()]
    problems = {
        str(path.relative_to(ROOT)): found
        for path in core_files()
        if (found := findings(path.read_text("utf-8"), words(), forms))
    }
    assert problems == {}


@pytest.mark.parametrize(
    "line",
    [
        '"""Reply as you would in Slack."""',
        "# a Discord gateway connection",
        'PATTERN = r"(slack|telegram):"',
        "x = TEAMS",
        "# the web chat's rooms",
        "from channels.web.channel import own_room",
        'OPERATOR = "web:operator"',
        "help='such as web:<room>'",
        "prefix = f'web:{room}'",
    ],
)
def test_the_walk_catches_a_platform_in_code_comments_and_docstrings(line: str) -> None:
    assert findings(line, words(), [literals("web")])


@pytest.mark.parametrize(
    "line",
    [
        "the local chat",
        "Web Push to browsers",
        "webhooks = []",
        "threadgate_webhook_secret",
        "f'{platform}:{room}'",
        "weburl",
    ],
)
def test_ordinary_words_pass(line: str) -> None:
    assert findings(line, words(), [literals("web")]) == []
