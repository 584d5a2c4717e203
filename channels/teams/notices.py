"""What a Teams card itself says: who settled it. Every notice a person is told about a press is the core's
(``gateway.notices``), answered through the invoke response only the presser sees."""

from __future__ import annotations

ANSWERED_BY = "Answered by {who}"
DECLINED_BY = "Declined by {who}"
