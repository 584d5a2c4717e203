"""The quickstart's pictures are taken as most newcomers first see the pages: on a phone, 390 px wide (the
browser tests take them at that width; ``THREADGATE_SCREENSHOTS=docs/screenshots`` refreshes them)."""

from __future__ import annotations

import re
import struct
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"
PHONE_WIDTH = 390
MAX_BYTES = 150_000  # a picture that grows past this is worth a look before it is committed
PICTURE = re.compile(r"!\[[^\]]*\]\((?P<path>screenshots/[^)\s]+\.png)\)")


def png_size(path: Path) -> tuple[int, int]:
    """A PNG's width and height, from its header chunk."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", f"{path} is not a PNG"
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def test_the_quickstarts_screenshots_are_taken_at_a_phones_width_and_kept_small() -> None:
    pictures = PICTURE.findall((DOCS / "quickstart.md").read_text())
    assert len(pictures) >= 3
    for picture in pictures:
        path = DOCS / picture
        width, _height = png_size(path)
        assert width == PHONE_WIDTH, f"{picture} is {width} px wide; retake it at {PHONE_WIDTH}"
        assert path.stat().st_size <= MAX_BYTES, f"{picture} takes {path.stat().st_size} bytes"
