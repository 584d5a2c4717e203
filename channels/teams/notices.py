"""What a Teams card itself says (its hints and who settled it). Every notice a person is told about a
press is the core's (``gateway.notices``), answered through the invoke response only the presser sees."""

from __future__ import annotations

NOT_BOTH = "Pick an option or type an answer, not both."
PICK_ONE = "Pick an option or type an answer."
TYPE_SOMETHING = "Type an answer."
ANSWERED_BY = "Answered by {who}"
DECLINED_BY = "Declined by {who}"
