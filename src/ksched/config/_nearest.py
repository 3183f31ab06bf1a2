"""The known name a misspelt one most likely means (difflib's ratio, from the standard
library: a few dozen names, no index worth keeping)."""

from __future__ import annotations

import difflib
from collections.abc import Collection

__all__ = ["did_you_mean", "nearest_name"]


def nearest_name(name: str, known: Collection[str]) -> str | None:
    """The known name ``name`` most likely misspells (case aside first), or None."""
    by_case = {k.lower(): k for k in known}
    if name.lower() in by_case:
        return by_case[name.lower()]
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.75)
    return close[0] if close else None


def did_you_mean(name: str, known: Collection[str]) -> str:
    """``; did you mean "X"?`` for the nearest known name, or "" when none is near."""
    near = nearest_name(name, known)
    return f'; did you mean "{near}"?' if near is not None else ""
