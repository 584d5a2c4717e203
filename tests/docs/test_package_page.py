"""The README is the package index's project page too: its links and picture must work there, where no
file of the repository sits beside it, and the package metadata points back at the repository."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SOURCE = "https://github.com/threadgate/threadgate"
IN_REPO = re.compile(
    rf"^(?:{re.escape(SOURCE)}/blob/main/|https://raw\.githubusercontent\.com/threadgate/threadgate/main/)"
    r"(?P<path>[^#]+)(?:#(?P<anchor>.+))?$"
)
INLINE = re.compile(r"!?\[[^\]]*\]\((?P<target>[^)\s]+)\)")
DEFINED = re.compile(r"^\[[^\]]+\]:\s*(?P<target>\S+)", re.M)


def readme_targets() -> list[str]:
    text = (REPO / "README.md").read_text()
    return [m["target"] for m in INLINE.finditer(text)] + [m["target"] for m in DEFINED.finditer(text)]


def heading_anchors(page: Path) -> set[str]:
    """GitHub's anchors for a page's headings: lower case, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#+\s+(.+?)\s*$", page.read_text(), re.M)
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


def test_every_readme_link_is_absolute_and_names_a_file_of_the_repository() -> None:
    targets = readme_targets()
    assert len(targets) > 10
    for target in targets:
        assert re.match(r"^https?://", target), f"{target} is relative: it breaks on the package index"
        found = IN_REPO.match(target)
        if found is None:
            continue  # a page elsewhere on the web
        page = REPO / found["path"]
        assert page.is_file(), f"{target} names {found['path']}, which is not in the repository"
        if found["anchor"]:
            assert found["anchor"] in heading_anchors(page), f"{target}: no such heading"


def test_the_package_metadata_shows_the_readme_and_links_the_repository() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["readme"] == "README.md"
    assert set(project["urls"]) == {"Homepage", "Documentation", "Source", "Issues"}
    assert all(url.startswith(SOURCE) for url in project["urls"].values())
    assert project["urls"]["Issues"] == f"{SOURCE}/issues"
