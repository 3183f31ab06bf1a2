"""The sweep's error: a spec that cannot be run."""

from __future__ import annotations

from .._errors import KschedError

__all__ = ["SpecError"]


class SpecError(KschedError):
    """A sweep spec that cannot be run (the message names the file and the field)."""
