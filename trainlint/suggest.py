""" "Did you mean": the closest known name to a misspelt one (a config key, a rule id or slug),
as ruff, git and click suggest; ``difflib``'s ratio, compared without case (``tl2o1``)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate most like ``word`` (ratio at least 0.6), as the candidate is spelt."""
    spelt = {candidate.lower(): candidate for candidate in candidates}
    matches = difflib.get_close_matches(word.lower(), list(spelt), n=1, cutoff=0.6)
    return spelt[matches[0]] if matches else None


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """`` (did you mean 'X'?)`` for the closest candidate, or nothing when none is close."""
    match = closest(word, candidates)
    return f" (did you mean {match!r}?)" if match is not None else ""
