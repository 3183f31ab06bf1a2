"""The sweep's error: a spec that cannot be run."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from .._errors import KschedError

__all__ = ["SpecError", "reject_unknown_fields"]


class SpecError(KschedError):
    """A sweep spec that cannot be run (the message names the file and the field)."""


def reject_unknown_fields(raw: Mapping[str, Any], known: Collection[str], where: str) -> None:
    """Raise SpecError naming the first field of ``raw`` not in ``known`` (and the known ones)."""
    unknown = sorted(set(raw) - set(known))
    if unknown:
        names = ", ".join(sorted(known))
        raise SpecError(f"{where}: {unknown[0]}: unknown field (known: {names})")
