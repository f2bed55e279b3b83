"""The team the dashboard serves: the review policy's quorum (operators who must agree before a pair is
settled; 1 = one reviewer, the latest decision in force)."""

from __future__ import annotations

#: one reviewer settles a pair
SINGLE_REVIEWER = 1


def review_quorum() -> int:
    """The number of operators who must agree before a pair is settled."""
    return SINGLE_REVIEWER
